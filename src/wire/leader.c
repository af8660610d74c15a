/* leader.c — picking the leader of a list of controllers by their /healthz
 * (see leader.h): asked in turn, the first saying `role leader` wins. */
#include "wire/leader.h"
#include "wire/client.h"
#include "util/strutil.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HEALTH_TIMEOUT_MS 2000

int vg_ctl_health(const char *url, int timeout_ms, struct vg_ctl_health *h)
{
    memset(h, 0, sizeof *h);
    vg_strlcpy(h->role, "down", sizeof h->role);
    h->term = -1;
    char u[600], err[256];
    long status = 0;
    char *body = NULL;
    snprintf(u, sizeof u, "%.580s/healthz", url);
    if (vg_client_get(u, NULL, timeout_ms, &status, &body, err, sizeof err) || status != 200 || !body) {
        free(body);
        return -1;
    }
    vg_ctl_health_parse(body, h);
    free(body);
    return 0;
}

void vg_ctl_health_parse(char *body, struct vg_ctl_health *h)
{
    memset(h, 0, sizeof *h);
    h->term = -1;
    vg_strlcpy(h->role, "single", sizeof h->role);
    char *save = NULL;
    for (char *l = strtok_r(body, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        char *sp = strchr(l, ' ');
        if (!sp) continue;
        *sp++ = 0;
        long v;
        if (!strcmp(l, "role") && (!strcmp(sp, "leader") || !strcmp(sp, "follower")))
            vg_strlcpy(h->role, sp, sizeof h->role);
        else if (!strcmp(l, "term") && vg_parse_long(sp, &v)) h->term = v;
        else if (!strcmp(l, "leader") && strcmp(sp, "none")) vg_strlcpy(h->leader, sp, sizeof h->leader);
    }
}

int vg_ctl_pick_leader(const char *list, char *out, size_t n, char *err, size_t errlen)
{
    out[0] = 0;
    if (!strchr(list, ',')) {
        if (strlen(list) >= n) return snprintf(err, errlen, "controller URL longer than %zu bytes", n - 1), -1;
        vg_strlcpy(out, list, n);
        return 0;
    }
    char first[512] = "", answered[512] = "";
    for (const char *p = list;; p++) {   /* the whole list is checked before any is asked */
        size_t len = strcspn(p, ",");
        if (!len) return snprintf(err, errlen, "controller list '%.300s': an empty URL in it", list), -1;
        if (len >= sizeof first || len >= n)
            return snprintf(err, errlen, "controller list: '%.*s…' is too long", 60, p), -1;
        p += len;
        if (!*p) break;
    }
    for (const char *p = list;;) {
        size_t len = strcspn(p, ",");
        char url[512];
        memcpy(url, p, len);
        url[len] = 0;
        if (!first[0]) vg_strlcpy(first, url, sizeof first);
        struct vg_ctl_health h;
        if (vg_ctl_health(url, HEALTH_TIMEOUT_MS, &h) == 0) {
            if (!strcmp(h.role, "leader")) return vg_strlcpy(out, url, n), 0;
            if (!answered[0]) vg_strlcpy(answered, url, sizeof answered);
        }
        if (!p[len]) break;
        p += len + 1;
    }
    vg_strlcpy(out, answered[0] ? answered : first, n);
    return 0;
}
