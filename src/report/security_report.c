/* security_report.c — renders `vigil audit --security`: one JSON document
 * (node, root, generated, source of the Slurm configuration, the `security`
 * array and a summary), or a table / Markdown with failures first and each
 * finding's evidence and fix. */
#include "report/escape.h"
#include "report/table.h"
#include "security/security.h"
#include "util/jsonutil.h"
#include "util/rootfs.h"
#include "util/timeutil.h"
#include <stdio.h>
#include <string.h>

static void node_name(const struct vg_sec_ctx *c, char *buf, size_t n)
{
    if (vg_read_line(c->root, "/proc/sys/kernel/hostname", buf, n) && vg_read_line(c->root, "/etc/hostname", buf, n))
        buf[0] = 0;
}

static void counts(const struct vg_sec_ctx *c, size_t k[4])
{
    k[0] = k[1] = k[2] = k[3] = 0;
    for (size_t i = 0; i < c->nresults; i++) k[c->results[i].status]++;
}

json_t *vg_sec_json(const struct vg_sec_ctx *c)
{
    json_t *doc = json_object(), *arr = json_array();
    char node[256];
    node_name(c, node, sizeof node);
    vg_json_set_str(doc, "node", node);
    vg_json_set_str(doc, "root", c->root);
    json_object_set_new(doc, "generated", vg_json_time(vg_now_ms()));
    vg_json_set_str(doc, "slurm_config", c->slurm_source);
    for (size_t i = 0; i < c->nresults; i++) {
        const struct vg_sec_result *r = &c->results[i];
        json_t *o = json_object();
        vg_json_set_str(o, "id", r->id);
        vg_json_set_str(o, "family", r->family);
        vg_json_set_str(o, "title", r->title);
        vg_json_set_str(o, "status", vg_sec_status_name(r->status));
        vg_json_set_str(o, "severity", vg_severity_name(r->severity));
        vg_json_set_str(o, "finding", r->finding);
        vg_json_set_str(o, "evidence", r->evidence);
        vg_json_set_str(o, "fix", r->fix);
        json_array_append_new(arr, o);
    }
    json_object_set_new(doc, "security", arr);
    size_t k[4];
    counts(c, k);
    json_object_set_new(doc, "summary", json_pack("{s:i, s:i, s:i, s:i, s:i}", "checks", (int)c->nresults, "pass", (int)k[0],
                                                  "warn", (int)k[1], "fail", (int)k[2], "unknown", (int)k[3]));
    return doc;
}

void vg_sec_print(const struct vg_sec_ctx *c, FILE *f, bool md)
{
    size_t k[4];
    counts(c, k);
    fprintf(f, "%svigil audit --security%s%s — %zu checks: %zu fail, %zu warn, %zu pass, %zu could not check\n\n",
            md ? "# " : "", strcmp(c->root, "/") ? " --root " : "", strcmp(c->root, "/") ? c->root : "", c->nresults, k[2],
            k[1], k[0], k[3]);
    static const char *const hdr[] = { "status", "severity", "check", "finding" };
    struct vg_table *t = vg_table_new(4, hdr);
    static const enum vg_sec_status order[] = { VG_SEC_FAIL, VG_SEC_WARN, VG_SEC_UNKNOWN, VG_SEC_PASS };
    for (int o = 0; o < 4; o++)
        for (size_t i = 0; i < c->nresults; i++) {
            const struct vg_sec_result *r = &c->results[i];
            if (r->status != order[o]) continue;
            const char *cells[] = { vg_sec_status_name(r->status), vg_severity_name(r->severity), r->id, r->finding };
            vg_table_row(t, cells);
        }
    if (md) vg_table_print_markdown(t, f);
    else vg_table_print(t, f);
    vg_table_free(t);
    bool head = false;
    for (size_t i = 0; i < c->nresults; i++) {
        const struct vg_sec_result *r = &c->results[i];
        if (r->status != VG_SEC_FAIL && r->status != VG_SEC_WARN) continue;
        if (!head) fprintf(f, "\n%sEvidence and fixes\n%s", md ? "## " : "", md ? "\n" : "");
        head = true;
        fputs(md ? "- **" : "", f);
        vg_put_text(f, r->id, md);
        fputs(md ? "**: " : ": ", f);
        vg_put_text(f, r->finding, md);
        fputs(md ? "  \n  evidence: `" : "\n  evidence: ", f);
        if (md) vg_put_code(f, r->evidence);
        else vg_put_text(f, r->evidence, false);
        fputs(md ? "`  \n  fix: " : "\n  fix: ", f);
        vg_put_text(f, r->fix, md);
        fputc('\n', f);
    }
}
