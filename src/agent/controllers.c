/* controllers.c — the controllers an agent sends to (--controller
 * URL1,URL2,…: controllers sharing one store) and the one it sends to now.
 * Messages, heartbeats and audit reports all go through ctl_post, the one
 * place that decides: no answer from the current controller (connection
 * refused, timed out, TLS not verified) or a 5xx makes the next one in the
 * list current, said in one line, and the request is tried there at once,
 * until one answers or each was tried once.  Any other answer (202, 400,
 * 401, 403, 413, …) comes from a live controller: it stays current (sticky)
 * until it fails.  The controllers dedupe a message by (node, spool, seq) in
 * their shared store, so one that timed out on a controller that stored it
 * all the same and is then sent to the next is not doubled. */
#include "agent/agent_int.h"
#include "util/log.h"
#include "util/strutil.h"
#include "wire/client.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One URL of the list (len bytes at u) into out: an http:// or https://
 * base, without trailing slashes or /v1/events. */
static int parse_one(const char *u, size_t len, char *out, size_t n, char *err, size_t errlen)
{
    while (len && (*u == ' ' || *u == '\t')) u++, len--;
    while (len && (u[len - 1] == ' ' || u[len - 1] == '\t')) len--;
    if (!len) return snprintf(err, errlen, "--controller: an empty URL in the list"), -1;
    size_t scheme = len >= 7 && !strncmp(u, "http://", 7) ? 7 : len >= 8 && !strncmp(u, "https://", 8) ? 8 : 0;
    size_t l = len;
    while (l > scheme && u[l - 1] == '/') l--;
    if (l >= scheme + 10 && !strncmp(u + l - 10, "/v1/events", 10))
        for (l -= 10; l > scheme && u[l - 1] == '/';) l--;
    if (!scheme || l == scheme)   /* no scheme, or no host after it */
        return snprintf(err, errlen, "--controller '%.*s': expected http://HOST:PORT or https://HOST:PORT", (int)len,
                        u), -1;
    if (l >= n) return snprintf(err, errlen, "--controller '%.*s': URL longer than %zu bytes", (int)len, u, n - 1), -1;
    snprintf(out, n, "%.*s", (int)l, u);
    return 0;
}

int ctl_init(struct agent *a, const char *list, char *err, size_t errlen)
{
    a->nctl = a->cur = 0;
    for (const char *p = list;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (a->nctl == VG_AGENT_CONTROLLERS_MAX)
            return snprintf(err, errlen, "--controller: more than %d URLs", VG_AGENT_CONTROLLERS_MAX), -1;
        char *base = a->ctl[a->nctl];
        if (parse_one(p, len, base, sizeof a->ctl[0], err, errlen)) return -1;
        for (int i = 0; i < a->nctl; i++)
            if (!strcmp(a->ctl[i], base))
                return snprintf(err, errlen, "--controller '%s': listed twice", base), -1;
        a->nctl++;
        if (!comma) return 0;
        p = comma + 1;
    }
}

void ctl_url(const struct agent *a, const char *path, char *buf, size_t n)
{
    snprintf(buf, n, "%s%s", a->ctl[a->cur], path);
}

/* The next controller becomes current, after the current one failed (why). */
static void fail_over(struct agent *a, const char *why)
{
    int from = a->cur;
    a->cur = (a->cur + 1) % a->nctl;
    a->failovers++;
    vg_warn("agent: controller %s failed (%s); now %s", a->ctl[from], why, a->ctl[a->cur]);
    snd_status(a, "failover");
}

int ctl_post(struct agent *a, const char *path, const char *body, int timeout_ms, struct ctl_result *r)
{
    int rc = -1;
    r->url[0] = r->err[0] = 0, r->status = 0, r->resp = NULL, r->tries = r->unanswered = 0;
    for (int i = 0; i < a->nctl; i++) {
        const char *url = r->url;
        ctl_url(a, path, r->url, sizeof r->url);
        free(r->resp);
        r->resp = NULL;
        rc = vg_client_post(url, &a->auth, body, timeout_ms, &r->status, &r->resp, r->err, sizeof r->err);
        r->tries++;
        if (rc == 0 && r->status < 500) break;   /* an answer from a live controller */
        if (rc) r->unanswered++;
        if (a->nctl == 1) break;
        char why[320];
        size_t ul = strlen(url);   /* the client's errors start with the URL, named in the line already */
        bool named = !strncmp(r->err, url, ul) && !strncmp(r->err + ul, ": ", 2);
        if (rc) snprintf(why, sizeof why, "%s", named ? r->err + ul + 2 : r->err);
        else snprintf(why, sizeof why, "HTTP %ld: %.200s", r->status, r->resp ? r->resp : "");
        fail_over(a, why);
    }
    return rc;
}
