/* checks.c — the security check registry: the families and their order,
 * running them, recording results, and the helpers the families share
 * (the Slurm configuration loaded once, stat and owner names under --root). */
#include "security/security.h"
#include "util/log.h"
#include "util/rootfs.h"
#include "util/sbuf.h"
#include "util/strutil.h"
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct vg_sec_family *const families[] = {
    &vg_sec_slurm,
    &vg_sec_infiniband,
    &vg_sec_node,
    &vg_sec_network,
    &vg_sec_storage,
    &vg_sec_devices,
    &vg_sec_nvlink,
};

const char *vg_sec_status_name(enum vg_sec_status s)
{
    static const char *const names[] = { "pass", "warn", "fail", "unknown" };
    return (unsigned)s < 4 ? names[s] : "unknown";
}

void vg_sec_emit(struct vg_sec_ctx *c, const struct vg_sec_check *k, enum vg_sec_status st, const char *evidence,
                 const char *fmt, ...)
{
    if (c->nresults == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 32;
        c->results = vg_xrealloc(c->results, c->cap * sizeof *c->results);
    }
    struct vg_sec_result *r = &c->results[c->nresults++];
    va_list ap;
    va_start(ap, fmt);
    char *finding;
    if (vasprintf(&finding, fmt, ap) < 0) finding = vg_xstrdup("?");
    va_end(ap);
    *r = (struct vg_sec_result){ .id = vg_xstrdup(k->id), .title = vg_xstrdup(k->title),
                                 .family = vg_xstrdup(c->family ? c->family : ""), .finding = finding,
                                 .evidence = vg_xstrdup(evidence ? evidence : ""),
                                 .fix = vg_xstrdup(st == VG_SEC_PASS ? "" : k->fix), .status = st,
                                 .severity = k->severity };
}

void vg_sec_init(struct vg_sec_ctx *c, const char *root, const struct vg_sec_config *conf)
{
    *c = (struct vg_sec_ctx){ .root = root && *root ? root : "/", .conf = conf };
    c->live_slurm = !strcmp(c->root, "/");
}

static bool listed(const char *only, const char *name)
{
    if (!only || !*only) return true;
    size_t l = strlen(name);
    for (const char *p = only; (p = strstr(p, name)); p += l)
        if ((p == only || p[-1] == ',') && (p[l] == 0 || p[l] == ',')) return true;
    return false;
}

void vg_sec_run(struct vg_sec_ctx *c, const char *only)
{
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++) {
        if (!listed(only, families[f]->name)) continue;
        c->family = families[f]->name;
        for (size_t i = 0; i < families[f]->n; i++) families[f]->checks[i].run(c, &families[f]->checks[i]);
    }
    c->family = NULL;
}

void vg_sec_free(struct vg_sec_ctx *c)
{
    for (size_t i = 0; i < c->nresults; i++) {
        struct vg_sec_result *r = &c->results[i];
        free(r->id), free(r->title), free(r->family), free(r->finding), free(r->evidence), free(r->fix);
    }
    free(c->results);
    vg_slurm_kv_free(c->slurm, c->nslurm);
    c->results = NULL, c->slurm = NULL, c->nresults = c->nslurm = 0;
}

const struct vg_sec_result *vg_sec_find(const struct vg_sec_ctx *c, const char *id)
{
    for (size_t i = 0; i < c->nresults; i++)
        if (!strcmp(c->results[i].id, id)) return &c->results[i];
    return NULL;
}

size_t vg_sec_failures(const struct vg_sec_ctx *c, enum vg_severity sev)
{
    size_t n = 0;
    for (size_t i = 0; i < c->nresults; i++) n += c->results[i].status == VG_SEC_FAIL && c->results[i].severity >= sev;
    return n;
}

static bool load_file(struct vg_sec_ctx *c, const char *path)
{
    char *text;
    if (vg_read_file(c->root, path, 4u << 20, &text, NULL)) {
        snprintf(c->slurm_err, sizeof c->slurm_err, "%s: %s", path, strerror(errno));
        return false;
    }
    vg_slurm_parse_conf_file(text, &c->slurm, &c->nslurm);
    free(text);
    snprintf(c->slurm_source, sizeof c->slurm_source, "%s", path);
    return true;
}

bool vg_sec_slurm_conf(struct vg_sec_ctx *c)
{
    if (c->slurm_loaded) return c->slurm != NULL || c->slurm_source[0];
    c->slurm_loaded = true;
    const char *env = getenv("SLURM_CONF");
    const char *path = c->conf && c->conf->slurm_conf ? c->conf->slurm_conf
                       : c->live_slurm && env && *env ? env
                                                      : "/etc/slurm/slurm.conf";
    vg_strlcpy(c->slurm_conf_path, path, sizeof c->slurm_conf_path);
    if (c->live_slurm) {
        struct vg_slurm s = { .conf = path, .timeout_ms = 5000 };
        if (vg_slurm_show_config(&s, &c->slurm, &c->nslurm) == 0) {
            const char *p = vg_slurm_kv_get(c->slurm, c->nslurm, "SLURM_CONF");
            if (p && *p) vg_strlcpy(c->slurm_conf_path, p, sizeof c->slurm_conf_path);
            snprintf(c->slurm_source, sizeof c->slurm_source, "scontrol show config");
            return true;
        }
        vg_debug("security: %s; reading %s", s.err, path);
    }
    return load_file(c, path);
}

int vg_sec_stat(const struct vg_sec_ctx *c, const char *path, struct stat *st)
{
    char *p = vg_root_path(c->root, path);
    int rc = stat(p, st);
    int e = errno;
    free(p);
    errno = e;
    return rc;
}

/* Looks id up in an /etc/passwd-style file under the root (field 3). */
static void id_name(const struct vg_sec_ctx *c, const char *file, unsigned id, char *buf, size_t n)
{
    snprintf(buf, n, "#%u", id);
    char *text;
    if (vg_read_file(c->root, file, 4u << 20, &text, NULL)) return;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *f[4];
        if (vg_split(line, ":", f, 4) < 3) continue;
        long v;
        if (vg_parse_long(f[2], &v) && v == (long)id) {
            snprintf(buf, n, "%s", f[0]);
            break;
        }
    }
    free(text);
}

void vg_sec_user_name(const struct vg_sec_ctx *c, unsigned uid, char *buf, size_t n)
{
    id_name(c, "/etc/passwd", uid, buf, n);
}

void vg_sec_group_name(const struct vg_sec_ctx *c, unsigned gid, char *buf, size_t n)
{
    id_name(c, "/etc/group", gid, buf, n);
}

void vg_sec_mode_str(const struct stat *st, char *buf, size_t n)
{
    snprintf(buf, n, "%04o", (unsigned)(st->st_mode & 07777));
}

int vg_sec_dir_exposure(const struct vg_sec_ctx *c, const char *dir, struct sbuf *e, struct sbuf *bad)
{
    struct stat st;
    if (vg_sec_stat(c, dir, &st) || !S_ISDIR(st.st_mode)) return -1;
    int nbad = 0;
    char mode[16];
    vg_sec_mode_str(&st, mode, sizeof mode);
    if (e->len < 400) sbuf_printf(e, "%s%s %s", e->len ? "; " : "", dir, mode);
    if ((st.st_mode & 02) && !(st.st_mode & S_ISVTX))
        nbad++, sbuf_printf(bad, "%s%s is world-writable without the sticky bit", bad->len ? "; " : "", dir);
    char **sub;
    int ns = vg_list_dir(c->root, dir, &sub);
    for (int i = 0; i < ns; i++) {
        char p[600];
        struct stat ss;
        snprintf(p, sizeof p, "%s/%s", dir, sub[i]);
        if (vg_sec_stat(c, p, &ss) || !S_ISDIR(ss.st_mode)) continue;
        vg_sec_mode_str(&ss, mode, sizeof mode);
        if (ss.st_mode & 04) {
            nbad++;
            if (bad->len < 300) sbuf_printf(bad, "%s%s readable by everyone", bad->len ? "; " : "", p);
            if (e->len < 400) sbuf_printf(e, ", %s %s", p, mode);
        }
    }
    if (ns >= 0) vg_free_list(sub, ns);
    return nbad;
}
