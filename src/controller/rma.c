/* rma.c — the RMA ticket of an exhausted repair ladder; see rma.h. */
#include "controller/rma.h"
#include "util/jsonutil.h"
#include "util/log.h"
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
    const char *keys[] = { "ticket", "node", NULL }, *vals[] = { ticket, node, NULL };
    char **argv = vg_argv_expand(tmpl, keys, vals);
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

/* Output as a JSON string: at most VG_RMA_ATTACH_MAX bytes, bytes that are
 * not UTF-8 (a compressed log) as '?'. */
static json_t *text_of(const char *s, size_t len, bool *cut)
{
    *cut = len > VG_RMA_ATTACH_MAX;
    if (*cut) len = VG_RMA_ATTACH_MAX;
    json_t *j = json_stringn(s, len);
    if (j) return j;
    char *copy = vg_xstrndup(s, len);
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)copy[i] >= 0x80 || !copy[i]) copy[i] = '?';
    j = json_stringn(copy, len);
    free(copy);
    return j;
}

/* Each rma_attach command's output and result, for the ticket; one that
 * fails or times out is recorded so, never stops the hand-off. */
static json_t *attachments(const struct vg_ladder *l, int64_t incident, const char *node)
{
    json_t *list = json_array();
    for (size_t i = 0; i < l->nattach; i++) {
        const char *keys[] = { "node", NULL }, *vals[] = { node, NULL };
        char **argv = vg_argv_expand(l->attach[i].argv, keys, vals);
        char *cmd = vg_argv_str((const char *const *)argv);
        struct vg_spawn_result r;
        int64_t t0 = vg_now_ms();
        vg_spawn((const char *const *)argv, NULL, NULL, (int)l->timeout_ms, &r);
        const char *result = r.timed_out ? "timed out" : r.status == -1 ? "could not run" : r.status ? "failed" : "ok";
        bool cut_out, cut_err;
        json_t *a = json_pack("{s:s, s:s, s:s, s:i, s:o, s:f, s:o, s:o}", "name", l->attach[i].name, "command", cmd,
                              "result", result, "exit_status", r.status, "started", vg_json_time(t0), "seconds",
                              (double)(vg_now_ms() - t0) / 1000.0, "stdout", text_of(r.out, r.out_len, &cut_out),
                              "stderr", text_of(r.err, r.err_len, &cut_err));
        json_object_set_new(a, "truncated", json_boolean(cut_out || cut_err));
        if (strcmp(result, "ok"))
            vg_warn("incident %lld: rma_attach %s: %s (recorded in the ticket)", (long long)incident,
                    l->attach[i].name, result);
        json_array_append_new(list, a);
        vg_spawn_result_free(&r);
        free(cmd);
        vg_argv_free(argv);
    }
    return list;
}

int vg_rma_handoff(struct vg_store *st, const struct vg_ladder *l, int64_t incident, const char *node,
                   const char *cause, json_t *attempts, char *path, size_t pathlen, char *err, size_t errlen)
{
    path[0] = 0;
    if (!l->rma_dir[0]) return 0;
    json_t *inc = vg_store_incident(st, incident);
    json_t *doc = json_pack("{s:s, s:I, s:s, s:s, s:o, s:O, s:o, s:o}", "ticket", "vigil-rma", "incident",
                            (json_int_t)incident, "node", node, "cause", cause, "created", vg_json_time(vg_now_ms()),
                            "attempts", attempts, "evidence", inc ? inc : json_null(), "attachments",
                            attachments(l, incident, node));
    char *text = doc ? json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS) : NULL;
    json_decref(doc);
    if (!text) return snprintf(err, errlen, "RMA ticket: out of memory"), -1;
    snprintf(path, pathlen, "%s/vigil-rma-%lld.json", l->rma_dir, (long long)incident);
    int rc = write_synced(path, text, err, errlen);
    free(text);
    if (!rc && l->rma_command) rc = run_hook(l->rma_command, path, node, err, errlen);
    return rc;
}
