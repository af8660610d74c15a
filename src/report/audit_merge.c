/* audit_merge.c — the fleet view of `vigil audit merge`: combines per-node
 * `vigil audit --json` reports (files, or every *.json of a directory) and
 * renders, for each component, which versions run on how many nodes (nodes
 * that differ are version skew, a failure mode of its own), and the union of
 * CVE findings with the number of nodes each affects.  Which nodes reported,
 * and which did not or not lately, is fleet_nodes.c's.  Options and the exit
 * code are src/cmd/audit.c's. */
#include "report/audit_report.h"
#include "report/fleet_int.h"
#include "report/table.h"
#include "util/jsonutil.h"
#include "util/log.h"
#include "util/rootfs.h"
#include "util/sbuf.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <stdlib.h>
#include <string.h>

/* Room for one more entry; false (counted) past VG_FLEET_MAX_ENTRIES. */
static bool room(struct vg_fleet *fl, int have)
{
    if (have < VG_FLEET_MAX_ENTRIES) return true;
    fl->dropped++;
    return false;
}

/* The component, added when new; NULL when the merge is full. */
static struct mcomp *comp_get(struct vg_fleet *fl, const char *name)
{
    if (!fl->cidx) fl->cidx = json_object();
    json_t *at = json_object_get(fl->cidx, name);
    if (at) return &fl->c[json_integer_value(at)];
    if (!room(fl, fl->nc)) return NULL;
    if ((fl->nc & (fl->nc - 1)) == 0) fl->c = vg_xrealloc(fl->c, sizeof *fl->c * (size_t)(fl->nc ? 2 * fl->nc : 1));
    fl->c[fl->nc] = (struct mcomp){ vg_xstrdup(name), NULL, 0, json_object() };
    json_object_set_new(fl->cidx, name, json_integer(fl->nc));
    return &fl->c[fl->nc++];
}

/* One more node runs versions of c; nodes: how many (a merged document read back). */
static void variant_add(struct vg_fleet *fl, struct mcomp *c, const char *versions, int nodes)
{
    if (!c) return;
    json_t *at = json_object_get(c->vidx, versions);
    if (at) {
        c->v[json_integer_value(at)].nodes += nodes;
        return;
    }
    if (!room(fl, fl->nvariants)) return;
    if ((c->nv & (c->nv - 1)) == 0) c->v = vg_xrealloc(c->v, sizeof *c->v * (size_t)(c->nv ? 2 * c->nv : 1));
    json_object_set_new(c->vidx, versions, json_integer(c->nv));
    c->v[c->nv++] = (struct variant){ vg_xstrdup(versions), nodes };
    fl->nvariants++;
}

/* The finding (id, component), added when new; NULL when the merge is full. */
static struct mfind *find_get(struct vg_fleet *fl, const json_t *f, const char *id, const char *comp)
{
    if (!fl->fidx) fl->fidx = json_object();
    char key[600];
    snprintf(key, sizeof key, "%s\n%s", id, comp);
    json_t *at = json_object_get(fl->fidx, key);
    if (at) return &fl->f[json_integer_value(at)];
    if (!room(fl, fl->nf)) return NULL;
    if ((fl->nf & (fl->nf - 1)) == 0) fl->f = vg_xrealloc(fl->f, sizeof *fl->f * (size_t)(fl->nf ? 2 * fl->nf : 1));
    json_object_set_new(fl->fidx, key, json_integer(fl->nf));
    fl->f[fl->nf] = (struct mfind){ vg_xstrdup(id), vg_xstrdup(comp), vg_xstrdup(vg_json_str(f, "fixed", "")),
                                    vg_xstrdup(vg_json_str(f, "url", "")), VG_SEV_NONE, 0, -1 };
    return &fl->f[fl->nf++];
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Components of one report: "name\tversion" sorted, grouped by name. */
static void add_components(struct vg_fleet *fl, const json_t *comps)
{
    size_t n = json_array_size(comps);
    char **keys = vg_xcalloc(n + 1, sizeof *keys);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const json_t *c = json_array_get(comps, i);
        const char *name = vg_json_str(c, "name", NULL), *ver = vg_json_str(c, "version", "");
        if (!name) continue;
        struct sbuf b = SBUF_INIT;
        sbuf_printf(&b, "%s\t%s", name, ver);
        keys[k++] = sbuf_take(&b);
    }
    qsort(keys, k, sizeof *keys, cmp_str);
    for (size_t i = 0; i < k;) {
        size_t nl = strcspn(keys[i], "\t"), j = i;
        struct sbuf vers = SBUF_INIT;
        for (; j < k && !strncmp(keys[j], keys[i], nl + 1); j++) {
            if (j > i && !strcmp(keys[j], keys[j - 1])) continue;
            if (vers.len) sbuf_puts(&vers, ", ");
            sbuf_puts(&vers, keys[j] + nl + 1);
        }
        keys[i][nl] = 0;
        variant_add(fl, comp_get(fl, keys[i]), vers.s ? vers.s : "", 1);
        sbuf_free(&vers);
        i = j;
    }
    for (size_t i = 0; i < k; i++) free(keys[i]);
    free(keys);
}

static void add_findings(struct vg_fleet *fl, const json_t *finds, int node)
{
    for (size_t i = 0; i < json_array_size(finds); i++) {
        const json_t *f = json_array_get(finds, i);
        const char *id = vg_json_str(f, "id", NULL), *comp = vg_json_str(f, "component", NULL);
        if (!id || !comp) continue;
        enum vg_severity sev = VG_SEV_NONE;
        vg_severity_parse(vg_json_str(f, "severity", "none"), &sev);
        struct mfind *m = find_get(fl, f, id, comp);
        if (!m) continue;
        if (sev > m->sev) m->sev = sev;
        if (m->last_node != node) { m->nodes++; m->last_node = node; }
    }
}

int vg_fleet_add_json(struct vg_fleet *fl, const json_t *doc, const char *name, char *err, size_t errlen)
{
    const json_t *comps = json_object_get(doc, "components"), *finds = json_object_get(doc, "findings");
    if (!json_is_array(comps) || !json_is_array(finds))
        return snprintf(err, errlen, "%s: field 'components'/'findings': not a vigil audit report", name), -1;
    fl->nodes = vg_xrealloc(fl->nodes, sizeof *fl->nodes * (size_t)(fl->nnodes + 1));
    fl->nodes[fl->nnodes] = vg_xstrdup(vg_json_str(doc, "node", name));
    add_components(fl, comps);
    add_findings(fl, finds, fl->nnodes);
    fl->nnodes++;
    return 0;
}

int vg_fleet_load(struct vg_fleet *fl, const json_t *doc, char *err, size_t errlen)
{
    const json_t *nodes = json_object_get(doc, "nodes"), *comps = json_object_get(doc, "components"),
                 *finds = json_object_get(doc, "findings");
    if (!json_is_array(nodes) || !json_is_array(comps) || !json_is_array(finds))
        return snprintf(err, errlen, "field 'nodes'/'components'/'findings': not a merged audit"), -1;
    for (size_t i = 0; i < json_array_size(nodes); i++) {
        fl->nodes = vg_xrealloc(fl->nodes, sizeof *fl->nodes * (size_t)(fl->nnodes + 1));
        fl->nodes[fl->nnodes++] = vg_xstrdup(json_is_string(json_array_get(nodes, i))
                                                 ? json_string_value(json_array_get(nodes, i)) : "?");
    }
    for (size_t i = 0; i < json_array_size(comps); i++) {
        const json_t *c = json_array_get(comps, i), *vs = json_object_get(c, "versions");
        const char *name = vg_json_str(c, "name", NULL);
        if (!name || !json_is_array(vs)) return snprintf(err, errlen, "field 'components[%zu]': no name or versions", i), -1;
        struct mcomp *m = comp_get(fl, name);
        for (size_t j = 0; j < json_array_size(vs); j++) {
            const json_t *v = json_array_get(vs, j);
            variant_add(fl, m, vg_json_str(v, "version", ""), (int)json_integer_value(json_object_get(v, "nodes")));
        }
    }
    for (size_t i = 0; i < json_array_size(finds); i++) {
        const json_t *f = json_array_get(finds, i);
        const char *id = vg_json_str(f, "id", NULL), *comp = vg_json_str(f, "component", NULL);
        if (!id || !comp) return snprintf(err, errlen, "field 'findings[%zu]': no id or component", i), -1;
        enum vg_severity sev = VG_SEV_NONE;
        vg_severity_parse(vg_json_str(f, "severity", "none"), &sev);
        struct mfind *m = find_get(fl, f, id, comp);
        if (!m) continue;
        if (sev > m->sev) m->sev = sev;
        m->nodes += (int)json_integer_value(json_object_get(f, "nodes"));
    }
    const json_t *tr = json_object_get(doc, "truncated");
    fl->dropped += json_is_integer(tr) ? (long)json_integer_value(tr) : 0;
    return vg_fleet_nodes_load(fl, doc, err, errlen);
}

static int add_report(struct vg_fleet *fl, const char *path, char *err, size_t errlen)
{
    json_error_t e;
    json_t *doc = json_load_file(path, 0, &e);
    if (!doc) return snprintf(err, errlen, "%s:%d: %s", path, e.line, e.text), -1;
    const char *base = strrchr(path, '/');
    int rc = vg_fleet_add_json(fl, doc, base ? base + 1 : path, err, errlen);
    json_decref(doc);
    return rc;
}

int vg_fleet_add_path(struct vg_fleet *fl, const char *path, char *err, size_t errlen)
{
    char **names;
    int n = vg_list_dir(NULL, path, &names);
    if (n < 0) return add_report(fl, path, err, errlen);
    int rc = 0;
    for (int i = 0; i < n && !rc; i++) {
        if (!vg_endswith(names[i], ".json")) continue;
        char *p = vg_xmalloc(strlen(path) + strlen(names[i]) + 2);
        sprintf(p, "%s/%s", path, names[i]);
        rc = add_report(fl, p, err, errlen);
        free(p);
    }
    vg_free_list(names, n);
    return rc;
}

int vg_fleet_skewed(const struct vg_fleet *fl)
{
    int n = 0;
    for (int i = 0; i < fl->nc; i++) n += fl->c[i].nv > 1;
    return n;
}

static int find_cmp(const void *x, const void *y)
{
    const struct mfind *a = x, *b = y;
    if (a->sev != b->sev) return a->sev > b->sev ? -1 : 1;
    if (a->nodes != b->nodes) return b->nodes - a->nodes;
    int c = strcmp(a->component, b->component);
    return c ? c : strcmp(a->id, b->id);
}

static int find_cmp(const void *x, const void *y);

/* Findings most severe first, then by node count. */
static void fleet_sort(struct vg_fleet *fl)
{
    if (fl->nf > 1) qsort(fl->f, (size_t)fl->nf, sizeof *fl->f, find_cmp);
}

json_t *vg_fleet_json(struct vg_fleet *fl)
{
    fleet_sort(fl);
    json_t *doc = json_object(), *nodes = json_array(), *comps = json_array(), *finds = json_array();
    json_object_set_new(doc, "generated", vg_json_time(vg_now_ms()));
    for (int i = 0; i < fl->nnodes; i++) json_array_append_new(nodes, json_string(fl->nodes[i]));
    json_object_set_new(doc, "nodes", nodes);
    for (int i = 0; i < fl->nc; i++) {
        json_t *v = json_array();
        for (int j = 0; j < fl->c[i].nv; j++)
            json_array_append_new(v, json_pack("{s:s, s:i}", "version", fl->c[i].v[j].versions, "nodes", fl->c[i].v[j].nodes));
        json_array_append_new(comps, json_pack("{s:s, s:b, s:o}", "name", fl->c[i].name, "skew", fl->c[i].nv > 1, "versions", v));
    }
    json_object_set_new(doc, "components", comps);
    int sev[VG_SEV_CRITICAL + 1] = { 0 };
    for (int i = 0; i < fl->nf; i++) {
        const struct mfind *f = &fl->f[i];
        sev[f->sev]++;
        json_t *o = json_pack("{s:s, s:s, s:s, s:i}", "id", f->id, "component", f->component, "severity",
                              vg_severity_name(f->sev), "nodes", f->nodes);
        vg_json_set_str(o, "fixed", f->fixed);
        vg_json_set_str(o, "url", f->url);
        json_array_append_new(finds, o);
    }
    json_object_set_new(doc, "findings", finds);
    if (fl->dropped) json_object_set_new(doc, "truncated", json_integer(fl->dropped));
    json_object_set_new(doc, "summary",
                        json_pack("{s:i, s:i, s:i, s:i, s:i, s:i}", "nodes", fl->nnodes, "skewed_components", vg_fleet_skewed(fl),
                                  "critical", sev[VG_SEV_CRITICAL], "high", sev[VG_SEV_HIGH], "medium", sev[VG_SEV_MEDIUM],
                                  "low", sev[VG_SEV_LOW]));
    vg_fleet_nodes_json(fl, doc);
    return doc;
}

void vg_fleet_print(struct vg_fleet *fl, FILE *f, bool md)
{
    fleet_sort(fl);
    fprintf(f, "%svigil audit merge — %d nodes, %d components, %d with version skew, %d distinct findings",
            md ? "## " : "", fl->nnodes, fl->nc, vg_fleet_skewed(fl), fl->nf);
    if (fl->coverage) fprintf(f, ", %d stale, %d not reporting", fl->nstale, fl->nmissing);
    fputc('\n', f);
    if (fl->dropped)
        fprintf(f, "%s%ld more components, versions or findings left out: the merge holds at most %d of each\n",
                md ? "\n" : "", fl->dropped, VG_FLEET_MAX_ENTRIES);
    vg_fleet_nodes_print(fl, f, md);
    static const char *const hc[] = { "COMPONENT", "VERSIONS", "NODES", "SKEW" };
    struct vg_table *t = vg_table_new(4, hc);
    for (int i = 0; i < fl->nc; i++)
        for (int j = 0; j < fl->c[i].nv; j++)
            vg_table_rowf(t, "%s\t%s\t%d\t%s", fl->c[i].name, fl->c[i].v[j].versions, fl->c[i].v[j].nodes,
                          fl->c[i].nv > 1 ? "SKEW" : "");
    fputs(md ? "\n### Components\n\n" : "\nComponents\n", f);
    if (md) vg_table_print_markdown(t, f);
    else vg_table_print(t, f);
    vg_table_free(t);
    if (!fl->nf) { fputs("\nNo known vulnerabilities on any node.\n", f); return; }
    static const char *const hf[] = { "SEVERITY", "CVE", "COMPONENT", "NODES", "FIXED", "ADVISORY" };
    t = vg_table_new(6, hf);
    for (int i = 0; i < fl->nf; i++) {
        const struct mfind *m = &fl->f[i];
        vg_table_rowf(t, "%s\t%s\t%s\t%d/%d\t%s\t%s", vg_severity_name(m->sev), m->id, m->component, m->nodes, fl->nnodes,
                      m->fixed[0] ? m->fixed : "none known", m->url);
    }
    fputs(md ? "\n### Findings\n\n" : "\nFindings\n", f);
    if (md) vg_table_print_markdown(t, f);
    else vg_table_print(t, f);
    vg_table_free(t);
}

void vg_fleet_free(struct vg_fleet *fl)
{
    if (!fl) return;
    for (int i = 0; i < fl->nc; i++) {
        for (int j = 0; j < fl->c[i].nv; j++) free(fl->c[i].v[j].versions);
        free(fl->c[i].v);
        free(fl->c[i].name);
        json_decref(fl->c[i].vidx);
    }
    json_decref(fl->cidx);
    json_decref(fl->fidx);
    for (int i = 0; i < fl->nf; i++) {
        free(fl->f[i].id);
        free(fl->f[i].component);
        free(fl->f[i].fixed);
        free(fl->f[i].url);
    }
    for (int i = 0; i < fl->nnodes; i++) free(fl->nodes[i]);
    vg_fleet_nodes_free(fl);
    free(fl->c);
    free(fl->f);
    free(fl->nodes);
    free(fl);
}

struct vg_fleet *vg_fleet_new(void) { return vg_xcalloc(1, sizeof(struct vg_fleet)); }

int vg_fleet_nodes(const struct vg_fleet *fl) { return fl->nnodes; }

size_t vg_fleet_count_at_least(const struct vg_fleet *fl, enum vg_severity sev)
{
    size_t n = 0;
    for (int i = 0; i < fl->nf; i++) n += fl->f[i].sev >= sev;
    return n;
}
