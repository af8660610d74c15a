/* sched_state.c — the burn-in scheduler's state file (schedule.h): every
 * pass it submitted as JSON ({"version": 1, "passes": [{node, job, suite,
 * result, submitted, start, end, ran_s, output, detail}]}), read back on the
 * next run, written atomically, locked while a scheduler runs, and the
 * per-node budget accounting over a rolling window. */
#include "burnin/schedule.h"
#include "util/jsonutil.h"
#include "util/rootfs.h"
#include "util/sbuf.h"
#include "util/strutil.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

static const char *const results[] = { "pending", "running", "pass", "fail", "unknown", "preempted" };

static bool known_result(const char *r)
{
    for (size_t i = 0; i < sizeof results / sizeof results[0]; i++)
        if (!strcmp(r, results[i])) return true;
    return false;
}

bool vg_bi_pass_inflight(const struct vg_bi_pass *p)
{
    return !strcmp(p->result, "pending") || !strcmp(p->result, "running");
}

struct vg_bi_pass *vg_bi_state_add(struct vg_bi_state *st)
{
    st->p = vg_xrealloc(st->p, (st->n + 1) * sizeof *st->p);
    struct vg_bi_pass *p = &st->p[st->n++];
    memset(p, 0, sizeof *p);
    return p;
}

void vg_bi_state_free(struct vg_bi_state *st)
{
    free(st->p);
    st->p = NULL;
    st->n = 0;
}

int vg_bi_state_parse(const char *text, struct vg_bi_state *st, char *err, size_t errlen)
{
    memset(st, 0, sizeof *st);
    json_error_t je;
    json_t *doc = json_loads(text, 0, &je);
    if (!doc) return snprintf(err, errlen, "line %d: %s", je.line, je.text), -1;
    json_t *passes = json_object_get(doc, "passes");
    if (vg_json_int(doc, "version", 0) != 1 || !json_is_array(passes)) {
        json_decref(doc);
        return snprintf(err, errlen, "not a burn-in state file (version 1 with passes)"), -1;
    }
    size_t i;
    json_t *j;
    json_array_foreach(passes, i, j) {
        const char *node = vg_json_str(j, "node", ""), *job = vg_json_str(j, "job", ""),
                   *result = vg_json_str(j, "result", "");
        if (!*node || !*job || !known_result(result)) {
            snprintf(err, errlen, "passes[%zu]: %s", i,
                     !*node ? "no node" : !*job ? "no job" : "result is not pending, running, pass, fail, unknown "
                                                             "or preempted");
            json_decref(doc);
            vg_bi_state_free(st);
            return -1;
        }
        struct vg_bi_pass *p = vg_bi_state_add(st);
        vg_strlcpy(p->node, node, sizeof p->node);
        vg_strlcpy(p->job, job, sizeof p->job);
        vg_strlcpy(p->result, result, sizeof p->result);
        vg_strlcpy(p->suite, vg_json_str(j, "suite", ""), sizeof p->suite);
        vg_strlcpy(p->output, vg_json_str(j, "output", ""), sizeof p->output);
        vg_strlcpy(p->detail, vg_json_str(j, "detail", ""), sizeof p->detail);
        p->submitted_ms = vg_json_get_time(j, "submitted");
        p->start_ms = vg_json_get_time(j, "start");
        p->end_ms = vg_json_get_time(j, "end");
    }
    json_decref(doc);
    return 0;
}

int vg_bi_state_load(const char *path, struct vg_bi_state *st, char *err, size_t errlen)
{
    memset(st, 0, sizeof *st);
    char *text;
    size_t len;
    if (vg_read_file(NULL, path, 16u << 20, &text, &len)) {
        if (errno == ENOENT) return 0;
        return snprintf(err, errlen, "%s: %s", path, strerror(errno)), -1;
    }
    char why[256];
    int rc = vg_bi_state_parse(text, st, why, sizeof why);
    if (rc) snprintf(err, errlen, "%s: %s", path, why);
    free(text);
    return rc;
}

json_t *vg_bi_state_to_json(const struct vg_bi_state *st)
{
    json_t *passes = json_array();
    for (size_t i = 0; i < st->n; i++) {
        const struct vg_bi_pass *p = &st->p[i];
        json_t *j = json_pack("{s:s, s:s, s:s, s:s, s:o, s:o, s:o}", "node", p->node, "job", p->job, "suite",
                              p->suite, "result", p->result, "submitted", vg_json_time(p->submitted_ms), "start",
                              vg_json_time(p->start_ms), "end", vg_json_time(p->end_ms));
        if (p->start_ms && p->end_ms)
            json_object_set_new(j, "ran_s", json_real((double)(p->end_ms - p->start_ms) / 1000.0));
        vg_json_set_str(j, "output", p->output);
        vg_json_set_str(j, "detail", p->detail);
        json_array_append_new(passes, j);
    }
    return json_pack("{s:i, s:o}", "version", 1, "passes", passes);
}

int vg_bi_state_save(const char *path, const struct vg_bi_state *st, char *err, size_t errlen)
{
    json_t *doc = vg_bi_state_to_json(st);
    char *text = json_dumps(doc, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
    json_decref(doc);
    struct sbuf tmp = SBUF_INIT;
    sbuf_printf(&tmp, "%s.tmp", path);
    int rc = -1, fd = open(tmp.s, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0 && text) {
        size_t len = strlen(text);
        rc = write(fd, text, len) == (ssize_t)len && write(fd, "\n", 1) == 1 && fsync(fd) == 0 ? 0 : -1;
    }
    if (fd >= 0 && close(fd)) rc = -1;
    if (!rc && rename(tmp.s, path)) rc = -1;
    if (rc) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        unlink(tmp.s);
    }
    sbuf_free(&tmp);
    free(text);
    return rc;
}

void vg_bi_state_prune(struct vg_bi_state *st, int64_t before)
{
    size_t k = 0;
    for (size_t i = 0; i < st->n; i++) {
        struct vg_bi_pass *p = &st->p[i];
        if (!vg_bi_pass_inflight(p) && p->end_ms && p->end_ms < before) {
            if (p->output[0]) unlink(p->output);
            continue;
        }
        st->p[k++] = *p;
    }
    st->n = k;
}

int vg_bi_state_lock(const char *path, char *err, size_t errlen)
{
    struct sbuf b = SBUF_INIT;
    sbuf_printf(&b, "%s.lock", path);
    int fd = open(b.s, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) snprintf(err, errlen, "%s: %s", b.s, strerror(errno));
    else if (flock(fd, LOCK_EX | LOCK_NB)) {
        snprintf(err, errlen, "%s: %s", b.s,
                 errno == EWOULDBLOCK ? "another burn-in scheduler holds it" : strerror(errno));
        close(fd);
        fd = -1;
    }
    sbuf_free(&b);
    return fd;
}

int64_t vg_bi_budget_used_ms(const struct vg_bi_state *st, const char *node, int64_t now, int64_t window)
{
    int64_t used = 0, from = now - window;
    for (size_t i = 0; i < st->n; i++) {
        const struct vg_bi_pass *p = &st->p[i];
        if (strcmp(p->node, node) || !p->start_ms) continue;
        int64_t s = p->start_ms, e = p->end_ms ? p->end_ms : vg_bi_pass_inflight(p) ? now : s;
        if (s < from) s = from;
        if (e > now) e = now;
        if (e > s) used += e - s;
    }
    return used;
}
