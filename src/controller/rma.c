/* rma.c — the RMA ticket of an exhausted repair ladder; see rma.h. */
#include "controller/rma.h"
#include "util/jsonutil.h"
#include "util/sbuf.h"
#include "util/spawn.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int write_synced(const char *path, const char *text, char *err, size_t errlen)
{
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
    if (fd < 0) return snprintf(err, errlen, "%s: %s", tmp, strerror(errno)), -1;
    size_t len = strlen(text), off = 0;
    while (off < len) {
        ssize_t w = write(fd, text + off, len - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) break;
        off += (size_t)w;
    }
    int e = off < len ? errno : fsync(fd) ? errno : 0;
    if (close(fd) && !e) e = errno;
    if (!e && rename(tmp, path)) e = errno;
    if (e) {
        unlink(tmp);
        return snprintf(err, errlen, "%s: %s", path, strerror(e ? e : EIO)), -1;
    }
    return 0;
}

static int run_hook(char *const *tmpl, const char *ticket, const char *node, char *err, size_t errlen)
{
    size_t n = 0;
    while (tmpl[n]) n++;
    char **argv = vg_xcalloc(n + 1, sizeof *argv);
    for (size_t i = 0; i < n; i++) {
        struct sbuf b = SBUF_INIT;
        for (const char *p = tmpl[i]; *p;) {
            if (vg_startswith(p, "{ticket}")) sbuf_puts(&b, ticket), p += 8;
            else if (vg_startswith(p, "{node}")) sbuf_puts(&b, node), p += 6;
            else sbuf_putc(&b, *p++);
        }
        argv[i] = sbuf_take(&b);
    }
    struct vg_spawn_result r;
    vg_spawn((const char *const *)argv, NULL, NULL, 60 * 1000, &r);
    int rc = r.timed_out || r.status ? -1 : 0;
    if (rc) {
        const char *text = *vg_trim(r.err) ? vg_trim(r.err) : vg_trim(r.out);
        snprintf(err, errlen, "rma_command %s: %s%s%.150s", argv[0], r.timed_out ? "timed out" : "failed",
                 *text ? ": " : "", text);
        char *nl = strchr(err, '\n');
        if (nl) *nl = 0;
    }
    vg_spawn_result_free(&r);
    vg_argv_free(argv);
    return rc;
}

int vg_rma_handoff(struct vg_store *st, const struct vg_ladder *l, int64_t incident, const char *node,
                   const char *cause, json_t *attempts, char *path, size_t pathlen, char *err, size_t errlen)
{
    path[0] = 0;
    if (!l->rma_dir[0]) return 0;
    json_t *inc = vg_store_incident(st, incident);
    json_t *doc = json_pack("{s:s, s:I, s:s, s:s, s:o, s:O, s:o}", "ticket", "vigil-rma", "incident",
                            (json_int_t)incident, "node", node, "cause", cause, "created", vg_json_time(vg_now_ms()),
                            "attempts", attempts, "evidence", inc ? inc : json_null());
    char *text = doc ? json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS) : NULL;
    json_decref(doc);
    if (!text) return snprintf(err, errlen, "RMA ticket: out of memory"), -1;
    snprintf(path, pathlen, "%s/vigil-rma-%lld.json", l->rma_dir, (long long)incident);
    int rc = write_synced(path, text, err, errlen);
    free(text);
    if (!rc && l->rma_command) rc = run_hook(l->rma_command, path, node, err, errlen);
    return rc;
}
