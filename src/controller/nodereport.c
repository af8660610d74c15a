/* nodereport.c — a node's audit report and burn-in passes into the store,
 * checked, bound to the nodes they may name and kept under the store's size
 * alarm; see nodereport.h. */
#include "controller/nodereport.h"
#include "controller/burnin_hist.h"
#include "controller/ingest.h"
#include "util/jsonutil.h"
#include "util/log.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEXT_MAX 1024   /* any string of a report (a summary, a note, a URL) */
#define NAME_MAX_ 128   /* a component's name or version */

enum { R_INPUT, R_NODE, R_ALARM, R_STORAGE, R_N };
static const char *const reason_names[R_N] = { "input", "node", "alarm", "storage" };

struct vg_nodereports {
    struct vg_nodereports_opts o;
    pthread_mutex_t lock;   /* the store connection, the counters */
    bool over;              /* the store is over its alarm (said once per crossing) */
    unsigned long kept_reports, kept_passes, refused[R_N];
};

struct vg_nodereports *vg_nodereports_new(const struct vg_nodereports_opts *o)
{
    struct vg_nodereports *r = vg_xcalloc(1, sizeof *r);
    r->o = *o;
    pthread_mutex_init(&r->lock, NULL);
    return r;
}

void vg_nodereports_free(struct vg_nodereports *r)
{
    if (!r) return;
    pthread_mutex_destroy(&r->lock);
    free(r);
}

static int answer(struct vg_nodereports *r, int reason, json_t **resp, int code, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int answer(struct vg_nodereports *r, int reason, json_t **resp, int code, const char *fmt, ...)
{
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&r->lock);
    r->refused[reason]++;
    pthread_mutex_unlock(&r->lock);
    *resp = json_pack("{s:s}", "error", why);
    return code;
}

/* Under the lock: whether the store is under its alarm; the crossing is said once. */
static bool under_alarm(struct vg_nodereports *r, int64_t *bytes)
{
    *bytes = vg_store_bytes(r->o.store);
    bool over = r->o.alarm_bytes > 0 && *bytes > r->o.alarm_bytes;
    if (over && !r->over)
        vg_err("ALERT store: %lld MiB, over the alarm of %lld MiB (--store-alarm-mb): node reports are refused "
               "until it is under it again (events are still taken)",
               (long long)(*bytes >> 20), (long long)(r->o.alarm_bytes >> 20));
    else if (!over && r->over)
        vg_warn("store: %lld MiB, under its alarm again: node reports are taken", (long long)(*bytes >> 20));
    r->over = over;
    return !over;
}

/* The lists of a `vigil audit --json` report and what their entries must hold. */
static int check_report(const json_t *rep, char *err, size_t errlen)
{
    static const char *const lists[] = { "components", "findings", "outdated", "fixed_by_distribution" };
    static const char *const sevs[] = { "none", "low", "medium", "high", "critical" };
    if (!json_is_array(json_object_get(rep, "components")) || !json_is_array(json_object_get(rep, "findings")))
        return snprintf(err, errlen, "report: not a vigil audit report (components, findings)"), -1;
    if (vg_json_text_ok(rep, "report", TEXT_MAX, 8, err, errlen)) return -1;
    for (size_t l = 0; l < sizeof lists / sizeof *lists; l++) {
        const json_t *a = json_object_get(rep, lists[l]), *e;
        if (a && !json_is_array(a)) return snprintf(err, errlen, "report.%s: not a list", lists[l]), -1;
        if (json_array_size(a) > VG_REPORT_MAX_ITEMS)
            return snprintf(err, errlen, "report.%s: %zu entries is over the limit of %d", lists[l],
                            json_array_size(a), VG_REPORT_MAX_ITEMS), -1;
        size_t i;
        json_array_foreach(a, i, e) {
            if (!json_is_object(e)) return snprintf(err, errlen, "report.%s[%zu]: not an object", lists[l], i), -1;
            const char *name = vg_json_str(e, l ? "component" : "name", NULL), *ver = vg_json_str(e, "version", "");
            if (!name || !*name || strlen(name) > NAME_MAX_ || strlen(ver) > NAME_MAX_)
                return snprintf(err, errlen, "report.%s[%zu].%s: missing, or a name or version over %d bytes",
                                lists[l], i, l ? "component" : "name", NAME_MAX_), -1;
            const char *id = vg_json_str(e, "id", NULL), *sev = vg_json_str(e, "severity", NULL);
            if (l == 1 && (!id || !*id || strlen(id) > 64 || strspn(id, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                                                        "0123456789._:-") != strlen(id)))
                return snprintf(err, errlen, "report.findings[%zu].id: not an advisory id (letters, digits, '.', "
                                             "'_', ':', '-', at most 64)", i), -1;
            bool sev_ok = !sev;
            for (size_t k = 0; sev && k < sizeof sevs / sizeof *sevs; k++) sev_ok |= !strcmp(sev, sevs[k]);
            if (!sev_ok)
                return snprintf(err, errlen, "report.%s[%zu].severity: not none, low, medium, high or critical",
                                lists[l], i), -1;
        }
    }
    return 0;
}

int vg_nodereports_inventory(struct vg_nodereports *r, const char *json, const char *sender, json_t **resp)
{
    char err[512];
    json_error_t je;
    json_t *j = json_loads(json, JSON_REJECT_DUPLICATES, &je);
    if (!j) return answer(r, R_INPUT, resp, 400, "invalid JSON at line %d: %s", je.line, je.text);
    json_t *rep = json_object_get(j, "report");
    int code = vg_nodeset_may_name(r->o.nodes, "node", json_string_value(json_object_get(j, "node")), sender, err,
                                   sizeof err);
    if (!code && check_report(rep, err, sizeof err)) code = 400;
    char *text = NULL;
    if (!code) {
        const char *node = json_string_value(json_object_get(j, "node"));
        json_object_set_new(rep, "node", json_string(node));   /* the name it was accepted under, whatever it said */
        text = json_dumps(rep, JSON_COMPACT);
        if (!text || strlen(text) > VG_REPORT_MAX_BYTES)
            code = 400, snprintf(err, sizeof err, "report: %zu bytes is over the limit of %u", text ? strlen(text) : 0,
                                 VG_REPORT_MAX_BYTES);
    }
    if (code) {
        free(text);
        json_decref(j);
        return answer(r, code == 400 ? R_INPUT : R_NODE, resp, code, "%s", err);
    }
    int64_t bytes;
    pthread_mutex_lock(&r->lock);
    bool room = under_alarm(r, &bytes);
    int rc = room ? vg_store_put_audit(r->o.store, json_string_value(json_object_get(j, "node")), vg_now_ms(), text) : 0;
    if (room && !rc) r->kept_reports++;
    snprintf(err, sizeof err, "%s", rc ? vg_store_error(r->o.store) : "");
    pthread_mutex_unlock(&r->lock);
    free(text);
    json_decref(j);
    if (!room)
        return answer(r, R_ALARM, resp, 507, "storage: the store is %lld MiB, over its alarm of %lld MiB: not kept",
                      (long long)(bytes >> 20), (long long)(r->o.alarm_bytes >> 20));
    if (rc) return answer(r, R_STORAGE, resp, 503, "storage: %s", err);
    *resp = json_pack("{s:b}", "ok", 1);
    return 200;
}

int vg_nodereports_burnin(struct vg_nodereports *r, const char *json, const char *sender, json_t **resp)
{
    char err[512];
    json_error_t je;
    json_t *doc = json_loads(json, JSON_REJECT_DUPLICATES, &je), *n;
    if (!doc) return answer(r, R_INPUT, resp, 400, "invalid JSON at line %d: %s", je.line, je.text);
    size_t i;
    int code = 0;
    json_array_foreach(json_object_get(doc, "nodes"), i, n) {
        char field[40];
        snprintf(field, sizeof field, "nodes[%zu].node", i);
        if ((code = vg_nodeset_may_name(r->o.nodes, field, json_string_value(json_object_get(n, "node")), sender, err,
                                        sizeof err)))
            break;
    }
    if (code) {
        json_decref(doc);
        return answer(r, code == 400 ? R_INPUT : R_NODE, resp, code, "%s", err);
    }
    int64_t bytes;
    pthread_mutex_lock(&r->lock);
    bool room = under_alarm(r, &bytes);
    int k = room ? vg_burnin_record(r->o.store, doc, "post", sender, vg_now_ms(), err, sizeof err) : 0;
    if (k > 0) r->kept_passes += (unsigned long)k;
    pthread_mutex_unlock(&r->lock);
    json_decref(doc);
    if (!room)
        return answer(r, R_ALARM, resp, 507, "storage: the store is %lld MiB, over its alarm of %lld MiB: not kept",
                      (long long)(bytes >> 20), (long long)(r->o.alarm_bytes >> 20));
    if (k == -1) return answer(r, R_INPUT, resp, 400, "%s", err);
    if (k < 0) return answer(r, R_STORAGE, resp, 503, "storage: %s", err);
    *resp = json_pack("{s:b, s:i}", "ok", 1, "recorded", k);
    return 200;
}

void vg_nodereports_metrics(struct vg_nodereports *r, struct sbuf *out)
{
    if (!r) return;
    pthread_mutex_lock(&r->lock);
    int64_t bytes = vg_store_bytes(r->o.store);
    sbuf_printf(out,
                "# HELP vigil_store_bytes The incident store's size on disk (database and write-ahead log).\n"
                "# TYPE vigil_store_bytes gauge\nvigil_store_bytes %lld\n"
                "# HELP vigil_store_alarm_bytes The size above which node reports are refused (0: no alarm).\n"
                "# TYPE vigil_store_alarm_bytes gauge\nvigil_store_alarm_bytes %lld\n"
                "# HELP vigil_node_reports_kept_total Audit reports and burn-in passes kept, by kind.\n"
                "# TYPE vigil_node_reports_kept_total counter\n"
                "vigil_node_reports_kept_total{kind=\"audit\"} %lu\nvigil_node_reports_kept_total{kind=\"burnin\"} %lu\n"
                "# HELP vigil_node_reports_refused_total Audit reports and burn-in documents refused, by reason.\n"
                "# TYPE vigil_node_reports_refused_total counter\n",
                (long long)bytes, (long long)r->o.alarm_bytes, r->kept_reports, r->kept_passes);
    for (int i = 0; i < R_N; i++)
        sbuf_printf(out, "vigil_node_reports_refused_total{reason=\"%s\"} %lu\n", reason_names[i], r->refused[i]);
    pthread_mutex_unlock(&r->lock);
}
