/* redfish.c — a power operation through a BMC's Redfish service (DMTF
 * DSP0266) with libcurl (loaded on first use, util/curlso.h): GET the
 * systems collection and its first member, POST the member's
 * `#ComputerSystem.Reset` action with a ResetType the BMC allows, follow a
 * 202's task monitor (Location) until the task ends or the deadline, then
 * wait for the PowerState the operation leads to.  Basic authentication over
 * HTTPS only; the certificate is checked against --cacert (or the system's
 * CAs) unless --insecure says otherwise.  The objects are read by
 * redfish_parse.c. */
#include "bmc/bmc.h"
#include "bmc/redfish_parse.h"
#include "util/curlso.h"
#include "util/jsonutil.h"
#include "util/sbuf.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct http {
    const struct vg_curl *cu;
    const struct vg_bmc_conf *c;
    char base[512];            /* https://host[:port] */
    int64_t deadline;          /* monotonic ms */
    char location[512];        /* the last answer's Location header */
};

struct answer {
    long status;               /* 0: no answer (err says why) */
    json_t *body;
    char err[256];
};

static size_t collect(char *ptr, size_t size, size_t n, void *ud)
{
    struct sbuf *b = ud;
    if (b->len < (1u << 20)) sbuf_add(b, ptr, size * n);   /* a Redfish object is small */
    return size * n;
}

static size_t header(char *buf, size_t size, size_t n, void *ud)
{
    size_t len = size * n;
    struct http *h = ud;
    if (len > 9 && !strncasecmp(buf, "Location:", 9)) {
        char *v = vg_xstrndup(buf + 9, len - 9);
        vg_strlcpy(h->location, vg_trim(v), sizeof h->location);
        free(v);
    }
    return len;
}

/* One request to path (or an absolute URL on the same BMC). */
static void request(struct http *h, const char *method, const char *path, const char *body, struct answer *a)
{
    const struct vg_curl *cu = h->cu;
    memset(a, 0, sizeof *a);
    int64_t left = h->deadline - vg_mono_ms();
    if (left <= 0) {
        snprintf(a->err, sizeof a->err, "%s %s: no time left", method, path);
        return;
    }
    if (vg_startswith(path, "https://") && (!vg_startswith(path, h->base) || !strchr("/:", path[strlen(h->base)]))) {
        snprintf(a->err, sizeof a->err, "%s %.200s: not on the BMC %s (credentials are not sent elsewhere)", method,
                 path, h->base);
        return;
    }
    char url[1200];
    snprintf(url, sizeof url, "%s%s", vg_startswith(path, "https://") ? "" : h->base, path);
    CURL *c = cu->easy_init();
    if (!c) {
        snprintf(a->err, sizeof a->err, "curl_easy_init failed");
        return;
    }
    struct curl_slist *hl = cu->slist_append(NULL, "Accept: application/json");
    hl = cu->slist_append(hl, "OData-Version: 4.0");
    if (body) {
        hl = cu->slist_append(hl, "Content-Type: application/json");
        cu->easy_setopt(c, CURLOPT_POSTFIELDS, body);
    }
    struct sbuf b = SBUF_INIT;
    char cerr[CURL_ERROR_SIZE] = "";
    h->location[0] = 0;
    cu->easy_setopt(c, CURLOPT_URL, url);
    cu->easy_setopt(c, CURLOPT_PROTOCOLS_STR, "https");
    cu->easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    cu->easy_setopt(c, CURLOPT_HTTPHEADER, hl);
    cu->easy_setopt(c, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
    cu->easy_setopt(c, CURLOPT_USERNAME, h->c->user);
    cu->easy_setopt(c, CURLOPT_PASSWORD, h->c->password);
    cu->easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)left);
    cu->easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)left);
    cu->easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    cu->easy_setopt(c, CURLOPT_USERAGENT, "vigil");
    cu->easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
    cu->easy_setopt(c, CURLOPT_WRITEDATA, &b);
    cu->easy_setopt(c, CURLOPT_HEADERFUNCTION, header);
    cu->easy_setopt(c, CURLOPT_HEADERDATA, h);
    cu->easy_setopt(c, CURLOPT_ERRORBUFFER, cerr);
    if (h->c->insecure) {
        cu->easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
        cu->easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
    } else if (h->c->cacert[0])
        cu->easy_setopt(c, CURLOPT_CAINFO, h->c->cacert);
    CURLcode rc = cu->easy_perform(c);
    if (rc == CURLE_OPERATION_TIMEDOUT)
        snprintf(a->err, sizeof a->err, "%s %s: the BMC did not answer in time", method, path);
    else if (rc != CURLE_OK)
        snprintf(a->err, sizeof a->err, "%s %s: %.180s", method, path, cerr[0] ? cerr : cu->easy_strerror(rc));
    else
        cu->easy_getinfo(c, CURLINFO_RESPONSE_CODE, &a->status);
    a->body = b.len ? json_loadb(b.s, b.len, 0, NULL) : NULL;
    sbuf_free(&b);
    cu->slist_free_all(hl);
    cu->easy_cleanup(c);
}

/* An answer that is not the one wanted, as one line in r->message. */
static int refused(struct vg_bmc_result *r, const char *method, const char *path, const struct answer *a)
{
    char msg[400];
    if (!a->status) snprintf(r->message, sizeof r->message, "%s", a->err);
    else {
        vg_redfish_error_message(a->body, msg, sizeof msg);
        snprintf(r->message, sizeof r->message, "%s %s: HTTP %ld%s%s%s", method, path, a->status,
                 a->status == 401 ? " Unauthorized (the BMC does not accept the credentials)" : "", *msg ? ": " : "",
                 msg);
    }
    return VG_BMC_REFUSED;
}

/* GET path: 0 with a->body an object, else REFUSED with the message. */
static int get(struct http *h, const char *path, struct answer *a, struct vg_bmc_result *r)
{
    request(h, "GET", path, NULL, a);
    if (a->status == 200 && json_is_object(a->body)) return 0;
    if (a->status == 200) snprintf(a->err, sizeof a->err, "GET %s: not a JSON object", path), a->status = 0;
    refused(r, "GET", path, a);
    json_decref(a->body);
    a->body = NULL;
    return VG_BMC_REFUSED;
}

/* Follows the task monitor until the task ends: 0 completed, else REFUSED. */
static int follow_task(struct http *h, const char *monitor, struct vg_bmc_result *r)
{
    char path[512], msg[400];
    vg_strlcpy(path, monitor, sizeof path);
    for (;;) {
        int64_t poll = h->c->poll_ms > 0 ? h->c->poll_ms : 1000;
        if (vg_mono_ms() + poll >= h->deadline) {
            snprintf(r->message, sizeof r->message, "the task (%.300s) did not end in time%s%s", path,
                     r->task[0] ? ": TaskState " : "", r->task);
            return VG_BMC_REFUSED;
        }
        vg_sleep_ms(poll);
        struct answer a;
        request(h, "GET", path, NULL, &a);
        if (a.status != 200 && a.status != 202 && a.status != 204) {
            int rc = refused(r, "GET", path, &a);
            json_decref(a.body);
            return rc;
        }
        vg_strlcpy(r->task, vg_redfish_task_state(a.body, msg, sizeof msg), sizeof r->task);
        json_decref(a.body);
        bool ok, done = vg_redfish_task_done(r->task, &ok);
        /* 200/204 without a Task: the monitor answers with the operation's own result */
        if (!r->task[0] && a.status != 202) done = ok = true;
        if (done && ok) return 0;
        if (done) {
            snprintf(r->message, sizeof r->message, "the task ended in %s%s%s", r->task, *msg ? ": " : "", msg);
            return VG_BMC_REFUSED;
        }
    }
}

/* Waits until the system's PowerState is want. */
static int confirm_power(struct http *h, const char *sys, const char *want, struct vg_bmc_result *r)
{
    for (;;) {
        struct answer a;
        if (get(h, sys, &a, r)) return VG_BMC_REFUSED;
        vg_strlcpy(r->power, vg_json_str(a.body, "PowerState", ""), sizeof r->power);
        json_decref(a.body);
        if (!strcmp(r->power, want)) return 0;
        int64_t poll = h->c->poll_ms > 0 ? h->c->poll_ms : 1000;
        if (vg_mono_ms() + poll >= h->deadline) {
            snprintf(r->message, sizeof r->message, "PowerState is %s, not %s, at the deadline",
                     r->power[0] ? r->power : "unknown", want);
            return VG_BMC_REFUSED;
        }
        vg_sleep_ms(poll);
    }
}

int vg_bmc_redfish(const struct vg_bmc_conf *c, enum vg_bmc_op op, struct vg_bmc_result *r)
{
    memset(r, 0, sizeof *r);
    struct http h = { .c = c, .deadline = vg_mono_ms() + (c->timeout_ms > 0 ? c->timeout_ms : 300000) };
    if (!vg_startswith(c->url, "https://") || !c->url[8]) {
        snprintf(r->message, sizeof r->message, "--redfish: '%.200s' is not an https:// URL (Redfish carries the "
                 "BMC's credentials)", c->url);
        return VG_BMC_BAD_INPUT;
    }
    const char *slash = strchr(c->url + 8, '/');
    snprintf(h.base, sizeof h.base, "%.*s", slash ? (int)(slash - c->url) : (int)strlen(c->url), c->url);
    char err[256];
    if (!(h.cu = vg_curl_load(err, sizeof err))) {
        snprintf(r->message, sizeof r->message, "%s", err);
        return VG_BMC_REFUSED;
    }
    struct answer a;
    if (get(&h, "/redfish/v1/Systems", &a, r)) return VG_BMC_REFUSED;
    char sys[512];
    const char *member = vg_redfish_first_member(a.body);
    vg_strlcpy(sys, member ? member : "", sizeof sys);
    json_decref(a.body);
    if (!*sys) {
        snprintf(r->message, sizeof r->message, "GET /redfish/v1/Systems: no member");
        return VG_BMC_REFUSED;
    }
    if (get(&h, sys, &a, r)) return VG_BMC_REFUSED;
    vg_strlcpy(r->power, vg_json_str(a.body, "PowerState", ""), sizeof r->power);
    if (op == VG_BMC_STATUS) {
        json_decref(a.body);
        snprintf(r->message, sizeof r->message, "%.300s: PowerState %s", sys, r->power[0] ? r->power : "unknown");
        return r->power[0] ? VG_BMC_DONE : VG_BMC_REFUSED;
    }
    const json_t *allowed;
    const char *t = vg_redfish_reset_target(a.body, &allowed);
    char target[512], why[400];
    vg_strlcpy(target, t ? t : "", sizeof target);
    int picked = t ? vg_redfish_pick_reset(op, allowed, c->reset_type, r->reset_type, sizeof r->reset_type, why,
                                           sizeof why)
                   : -1;
    json_decref(a.body);
    if (!t) {
        snprintf(r->message, sizeof r->message, "%.300s has no #ComputerSystem.Reset action", sys);
        return VG_BMC_REFUSED;
    }
    if (picked) {
        snprintf(r->message, sizeof r->message, "%s", why);
        return VG_BMC_REFUSED;
    }
    json_t *body = json_pack("{s:s}", "ResetType", r->reset_type);
    char *text = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    request(&h, "POST", target, text, &a);
    free(text);
    char monitor[512];
    vg_strlcpy(monitor, h.location, sizeof monitor);
    int rc = 0;
    if (a.status == 202 && *monitor) rc = follow_task(&h, monitor, r);
    else if (a.status != 200 && a.status != 202 && a.status != 204) rc = refused(r, "POST", target, &a);
    json_decref(a.body);
    if (!rc) rc = confirm_power(&h, sys, op == VG_BMC_OFF ? "Off" : "On", r);
    if (!rc)
        snprintf(r->message, sizeof r->message, "%.300s: ResetType %s%s%s, PowerState %s", sys, r->reset_type,
                 r->task[0] ? ", task " : "", r->task, r->power);
    return rc ? VG_BMC_REFUSED : VG_BMC_DONE;
}
