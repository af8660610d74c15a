/* secconf.c — the security audit's configuration file (--config FILE or
 * --targets FILE): management targets, shared mounts, config paths.  The
 * grammar is in security.h. */
#include "security/security.h"
#include "util/strutil.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int bad(char *err, size_t n, const char *name, int line, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int bad(char *err, size_t n, const char *name, int line, const char *fmt, ...)
{
    int w = snprintf(err, n, "%s:%d: ", name, line);
    va_list ap;
    va_start(ap, fmt);
    if (w >= 0 && (size_t)w < n) vsnprintf(err + w, n - (size_t)w, fmt, ap);
    va_end(ap);
    return -1;
}

int vg_sec_config_parse(const char *text, const char *name, struct vg_sec_config *c, char *err, size_t errlen)
{
    *c = (struct vg_sec_config){ .timeout_ms = 500 };
    char *copy = vg_xstrdup(text ? text : ""), *p = copy;
    int line = 0, rc = 0;
    while (p && !rc) {
        char *nl = strchr(p, '\n');
        if (nl) *nl = 0;
        line++;
        char *hash = strchr(p, '#');
        if (hash) *hash = 0;
        char *w[6];
        int n = 0;
        for (char *tok = strtok(p, " \t\r"); tok && n < 6; tok = strtok(NULL, " \t\r")) w[n++] = tok;
        p = nl ? nl + 1 : NULL;
        if (n == 0) continue;
        if (!strcmp(w[0], "target")) {
            long port;
            if (n != 4) rc = bad(err, errlen, name, line, "target: expected `target NAME HOST PORT`");
            else if (!vg_parse_long(w[3], &port) || port < 1 || port > 65535)
                rc = bad(err, errlen, name, line, "target %s: port '%s' is not 1..65535", w[1], w[3]);
            else if (strlen(w[1]) >= 64 || strlen(w[2]) >= 256)
                rc = bad(err, errlen, name, line, "target: name or host too long");
            else {
                c->targets = vg_xrealloc(c->targets, (c->ntargets + 1) * sizeof *c->targets);
                struct vg_sec_target *t = &c->targets[c->ntargets++];
                vg_strlcpy(t->name, w[1], sizeof t->name);
                vg_strlcpy(t->host, w[2], sizeof t->host);
                t->port = (int)port;
            }
        } else if (!strcmp(w[0], "shared")) {
            if (n != 2 || w[1][0] != '/') rc = bad(err, errlen, name, line, "shared: expected `shared /ABSOLUTE/DIR`");
            else {
                c->shared = vg_xrealloc(c->shared, (c->nshared + 1) * sizeof *c->shared);
                c->shared[c->nshared++] = vg_xstrdup(w[1]);
            }
        } else if (!strcmp(w[0], "slurm-conf") || !strcmp(w[0], "opensm-conf")) {
            char **dst = w[0][0] == 's' ? &c->slurm_conf : &c->opensm_conf;
            if (n != 2 || w[1][0] != '/') rc = bad(err, errlen, name, line, "%s: expected an absolute path", w[0]);
            else free(*dst), *dst = vg_xstrdup(w[1]);
        } else if (!strcmp(w[0], "timeout-ms")) {
            long ms;
            if (n != 2 || !vg_parse_long(w[1], &ms) || ms < 1 || ms > 1000)
                rc = bad(err, errlen, name, line, "timeout-ms: expected 1..1000");
            else c->timeout_ms = (int)ms;
        } else rc = bad(err, errlen, name, line, "unknown directive '%s' (target, shared, slurm-conf, opensm-conf, timeout-ms)", w[0]);
    }
    free(copy);
    if (rc) vg_sec_config_free(c);
    return rc;
}

void vg_sec_config_free(struct vg_sec_config *c)
{
    for (size_t i = 0; i < c->nshared; i++) free(c->shared[i]);
    free(c->shared), free(c->targets), free(c->slurm_conf), free(c->opensm_conf);
    *c = (struct vg_sec_config){ 0 };
}
