/* orch.c — the table of scheduler backends and what is built on their ops
 * the same way for every backend (ownership, resume what vigil isolated, the
 * local node name); see orch.h. */
#include "orch/orch.h"
#include "util/strutil.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern const struct vg_orch_ops vg_orch_slurm;
extern const struct vg_orch_ops vg_orch_k8s;

/* One line per scheduler. */
static const struct vg_orch_ops *const backends[] = {
    &vg_orch_slurm,
    &vg_orch_k8s,
};
#define NBACKENDS (sizeof backends / sizeof backends[0])

const struct vg_orch_ops *vg_orch_at(size_t i) { return i < NBACKENDS ? backends[i] : NULL; }

const struct vg_orch_ops *vg_orch_find(const char *name)
{
    if (!name || !*name) return backends[0];
    for (size_t i = 0; i < NBACKENDS; i++)
        if (!strcmp(backends[i]->name, name)) return backends[i];
    return NULL;
}

const char *vg_orch_names(void)
{
    static char names[128];
    if (!names[0])
        for (size_t i = 0, l = 0; i < NBACKENDS && l < sizeof names; i++)
            l += (size_t)snprintf(names + l, sizeof names - l, "%s%s", i ? ", " : "", backends[i]->name);
    return names;
}

int vg_orch_fail(struct vg_orch *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(o->err, sizeof o->err, fmt, ap);
    va_end(ap);
    for (char *p = o->err; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    return -1;
}

struct vg_orch *vg_orch_open_ops(const struct vg_orch_ops *ops, const struct vg_orch_conf *c, char *err,
                                 size_t errlen)
{
    struct vg_orch *o = vg_xcalloc(1, sizeof *o);
    static const struct vg_orch_conf none;
    if (!c) c = &none;
    o->ops = ops;
    o->timeout_ms = c->timeout_ms > 0 ? c->timeout_ms : 10000;
    if (ops->open && ops->open(o, c)) {
        snprintf(err, errlen, "orchestrator %s: %s", ops->name, o->err);
        free(o);
        return NULL;
    }
    return o;
}

struct vg_orch *vg_orch_open(const char *name, const struct vg_orch_conf *c, char *err, size_t errlen)
{
    const struct vg_orch_ops *ops = vg_orch_find(name);
    if (!ops) {
        snprintf(err, errlen, "--orchestrator: '%s' is not one of %s", name, vg_orch_names());
        return NULL;
    }
    return vg_orch_open_ops(ops, c, err, errlen);
}

void vg_orch_close(struct vg_orch *o)
{
    if (!o) return;
    if (o->ops->close) o->ops->close(o);
    free(o);
}

bool vg_orch_ours(const struct vg_orch_node *st) { return vg_startswith(st->reason, VG_REASON_PREFIX); }

int vg_orch_resume_ours(struct vg_orch *o, const char *const *nodes, size_t n)
{
    if (!n) return 0;
    struct vg_orch_node *st;
    size_t ns;
    if (o->ops->nodes(o, nodes, n, &st, &ns)) return -1;
    const char **ours = vg_xcalloc(ns + 1, sizeof *ours);
    size_t k = 0;
    for (size_t i = 0; i < ns; i++)
        if ((st[i].drain || st[i].down) && vg_orch_ours(&st[i])) ours[k++] = st[i].name;
    int rc = k ? o->ops->resume(o, ours, k) : 0;
    free(ours);
    free(st);
    return rc ? -1 : (int)k;
}

int vg_orch_node(struct vg_orch *o, const char *name, struct vg_orch_node *out)
{
    struct vg_orch_node *st;
    size_t n;
    if (o->ops->nodes(o, &name, 1, &st, &n)) return -1;
    int rc = -1;
    for (size_t i = 0; i < n && rc; i++)
        if (!strcmp(st[i].name, name)) *out = st[i], rc = 0;
    free(st);
    return rc ? vg_orch_fail(o, "node %s is not known to %s", name, o->ops->name) : 0;
}

void vg_orch_local_node(const struct vg_orch_ops *ops, char *buf, size_t n)
{
    const char *v = getenv("VIGIL_NODE");
    if (v && *v) vg_strlcpy(buf, v, n);
    else if (ops && ops->local_node && ops->local_node(buf, n) && *buf) {
    } else if (gethostname(buf, n) || !*buf) vg_strlcpy(buf, "localhost", n);
    buf[n - 1] = 0;
    char *dot = strchr(buf, '.');
    if (dot) *dot = 0;
}

void vg_strv_free(char **v, size_t n)
{
    for (size_t i = 0; v && i < n; i++) free(v[i]);
    free(v);
}
