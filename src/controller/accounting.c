/* accounting.c — reliability figures from the incident store; see
 * accounting.h. */
#include "controller/accounting.h"
#include "util/jsonutil.h"
#include "util/strutil.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct span {
    char node[64];
    int64_t from, to;
};

/* "ARGV0: ok…" — a repair step's or health check's detail says it passed. */
static bool passed(const json_t *step)
{
    const char *d = strstr(vg_json_str(step, "detail", ""), ": ");
    return d && vg_startswith(d + 2, "ok");
}

static void bump(json_t *rungs, const char *rung, const char *what)
{
    json_t *r = json_object_get(rungs, rung);
    if (!r) json_object_set_new(rungs, rung, r = json_pack("{s:i, s:i, s:i}", "tried", 0, "failed", 0, "returned", 0));
    json_object_set_new(r, what, json_integer(json_integer_value(json_object_get(r, what)) + 1));
}

/* The repair ladder's steps of one incident into rungs {NAME: {tried,
 * failed, returned}} (returned: its health check passed and the node came
 * back); 1 when it was handed off for RMA. */
static size_t ladder_outcomes(const json_t *inc, bool returned, json_t *rungs)
{
    const char *key;
    json_t *st, *steps = json_object_get(inc, "steps");
    json_object_foreach(steps, key, st) {
        if (!json_is_object(st)) continue;
        if (vg_startswith(key, "repair ")) {
            bump(rungs, key + 7, "tried");
            if (!passed(st)) bump(rungs, key + 7, "failed");
        } else if (vg_startswith(key, "health check after ") && returned && passed(st))
            bump(rungs, key + 19, "returned");
    }
    return json_is_object(json_object_get(steps, "rma"));
}

static int64_t step_at(const json_t *inc, const char *step)
{
    return vg_json_get_time(json_object_get(json_object_get(inc, "steps"), step), "at");
}

/* The incidents' latest stamp. */
static int64_t newest_stamp(const json_t *incidents)
{
    int64_t newest = 0;
    size_t i;
    const json_t *inc;
    json_array_foreach(incidents, i, inc) {
        const char *k;
        json_t *step;
        json_object_foreach(json_object_get(inc, "steps"), k, step) {
            int64_t at = vg_json_get_time(step, "at");
            if (at > newest) newest = at;
        }
    }
    return newest;
}

static int by_node_then_start(const void *a, const void *b)
{
    const struct span *x = a, *y = b;
    int c = strcmp(x->node, y->node);
    return c ? c : (x->from > y->from) - (x->from < y->from);
}

/* Merges each node's overlapping outages in place (sorted); returns the count. */
static size_t merge(struct span *s, size_t n)
{
    qsort(s, n, sizeof *s, by_node_then_start);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (k && !strcmp(s[k - 1].node, s[i].node) && s[i].from <= s[k - 1].to) {
            if (s[i].to > s[k - 1].to) s[k - 1].to = s[i].to;
        } else
            s[k++] = s[i];
    }
    return k;
}

static int by_count(const void *a, const void *b)
{
    const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
    json_int_t cx = vg_json_int(x, "count", 0), cy = vg_json_int(y, "count", 0);
    return cx != cy ? (cx < cy) - (cx > cy) : strcmp(vg_json_str(x, "cause", ""), vg_json_str(y, "cause", ""));
}

struct edge {
    int64_t at;
    int d;
};

static int by_time(const void *a, const void *b)
{
    const struct edge *x = a, *y = b;
    if (x->at != y->at) return (x->at > y->at) - (x->at < y->at);
    return x->d - y->d;   /* a node back before another goes out at the same instant */
}

/* Time the domain had more than max nodes out at once. */
static int64_t over_limit(const struct span *s, size_t n, const struct vg_policy *p, const char *dom, int max)
{
    struct edge *e = vg_xcalloc(2 * n + 1, sizeof *e);
    size_t ne = 0;
    for (size_t i = 0; i < n; i++) {
        const char *d = vg_policy_node_domain(p, s[i].node);
        if (!d || strcmp(d, dom)) continue;
        e[ne++] = (struct edge){ s[i].from, +1 };
        e[ne++] = (struct edge){ s[i].to, -1 };
    }
    qsort(e, ne, sizeof *e, by_time);
    int out = 0;
    int64_t total = 0, since = 0;
    for (size_t i = 0; i < ne; i++) {
        bool was = out > max;
        out += e[i].d;
        if (!was && out > max) since = e[i].at;
        if (was && out <= max) total += e[i].at - since;
    }
    free(e);
    return total;
}

/* "3 min", "5.2 h", "12.0 d": a span for the reasons. */
static void span(int64_t ms, char *buf, size_t n)
{
    if (ms < 3600000) snprintf(buf, n, "%lld min", (long long)(ms / 60000));
    else if (ms < 86400000) snprintf(buf, n, "%.1f h", (double)ms / 3.6e6);
    else snprintf(buf, n, "%.1f d", (double)ms / 8.64e7);
}

json_t *vg_accounting(const json_t *incidents, const struct vg_acct_opts *o)
{
    /* no node-time before the controller's first record counts: it watched nothing then */
    int64_t until = o->until_ms, since = o->first_ms > o->since_ms ? o->first_ms : o->since_ms;
    if (since > until) since = until;
    int64_t window = until - since;
    bool history = window >= VG_ACCT_MIN_HISTORY_MS;
    int64_t newest = o->until_now ? newest_stamp(incidents) : 0;
    bool behind = newest > until;   /* the clock stepped back: the window ends before what it holds */
    size_t n = json_array_size(incidents), ns = 0, nnodes = 0, interruptions = 0, counted = 0, repaired = 0;
    struct span *s = vg_xcalloc(n + 1, sizeof *s);
    char (*nodes)[64] = vg_xcalloc(n + 1, sizeof *nodes);
    size_t *per_count = vg_xcalloc(n + 1, sizeof *per_count);
    json_t *causes = json_object(), *rungs = json_object();
    double repair_s = 0;
    size_t rma = 0;
    for (size_t i = 0; i < n; i++) {
        const json_t *inc = json_array_get(incidents, i);
        const char *node = vg_json_str(inc, "node", "");
        int64_t detected = step_at(inc, "detected"), isolated = step_at(inc, "isolated"),
                returned = step_at(inc, "returned");
        if (!detected || detected >= until || (returned && returned < since)) continue;
        counted++;
        size_t k = 0;
        while (k < nnodes && strcmp(nodes[k], node)) k++;
        if (k == nnodes) vg_strlcpy(nodes[nnodes++], node, 64);
        per_count[k]++;
        char cause[64];
        const json_t *code = json_object_get(inc, "code");
        if (json_is_integer(code)) snprintf(cause, sizeof cause, "%s %lld", vg_json_str(inc, "kind", "?"),
                                            (long long)json_integer_value(code));
        else snprintf(cause, sizeof cause, "%s", vg_json_str(inc, "kind", "?"));
        json_object_set_new(causes, cause, json_integer(vg_json_int(causes, cause, 0) + 1));
        rma += ladder_outcomes(inc, returned != 0, rungs);
        if (!isolated) continue;
        interruptions++;
        /* a store written while the wall clock was stepped back may hold a return before its
         * detection: counted as 0, never negative */
        if (returned) repair_s += (double)(returned > detected ? returned - detected : 0) / 1000.0, repaired++;
        struct span *x = &s[ns++];
        vg_strlcpy(x->node, node, sizeof x->node);
        x->from = isolated < since ? since : isolated;
        x->to = !returned || returned > until ? until : returned;
        if (x->to <= x->from) ns--;
    }
    ns = merge(s, ns);
    size_t cluster = o->nodes;
    double lost_ms = 0;
    json_t *per = json_array();
    for (size_t i = 0; i < ns; i++) lost_ms += (double)(s[i].to - s[i].from);
    for (size_t k = 0; k < nnodes; k++) {
        double l = 0;
        for (size_t i = 0; i < ns; i++)
            if (!strcmp(s[i].node, nodes[k])) l += (double)(s[i].to - s[i].from);
        json_array_append_new(per, json_pack("{s:s, s:I, s:f}", "node", nodes[k], "incidents", (json_int_t)per_count[k],
                                             "hours_lost", l / 3.6e6));
    }
    json_t *racks = json_array();
    const struct vg_policy *p = o->policy;
    /* the domains: the policy's lines, then those nodes reported (a node with a line keeps its line's) */
    json_t *members = json_object();
    for (size_t d = 0; p && d < p->ndomain; d++)
        json_object_set_new(members, p->domain_names[d],
                            json_integer(vg_json_int(members, p->domain_names[d], 0) + 1));
    json_t *learned = p && p->learned ? vg_domains_json(p->learned) : NULL;
    const char *node, *dom;
    json_t *dv;
    json_object_foreach(learned, node, dv) {
        if (vg_policy_domain(p, node)) continue;
        dom = json_string_value(dv);
        json_object_set_new(members, dom, json_integer(vg_json_int(members, dom, 0) + 1));
    }
    json_decref(learned);
    json_object_foreach(members, dom, dv) {
        size_t count = (size_t)json_integer_value(dv);
        double out = 0;
        for (size_t i = 0; i < ns; i++) {
            const char *nd = vg_policy_node_domain(p, s[i].node);
            if (nd && !strcmp(nd, dom)) out += (double)(s[i].to - s[i].from);
        }
        json_array_append_new(racks, json_pack("{s:s, s:I, s:o, s:f}", "rack", dom, "nodes", (json_int_t)count,
                                               "availability", history && !behind ? json_real(1.0 - out / ((double)count * (double)window))
                                                                       : json_null(),
                                               "sla_down_s",
                                               (double)over_limit(s, ns, p, dom, p->domain_max_unavailable) / 1000.0));
    }
    json_decref(members);
    /* causes, most frequent first (the table of Llama 3's report) */
    size_t nc = json_object_size(causes), ci = 0;
    json_t **cv = vg_xcalloc(nc + 1, sizeof *cv);
    const char *key;
    json_t *v;
    json_object_foreach(causes, key, v) cv[ci++] = json_pack("{s:s, s:O}", "cause", key, "count", v);
    qsort(cv, nc, sizeof *cv, by_count);
    json_t *cl = json_array();
    for (size_t i = 0; i < nc; i++) json_array_append_new(cl, cv[i]);
    free(cv);
    json_decref(causes);
    json_t *doc = json_pack("{s:{s:o, s:o, s:f, s:o, s:o}, s:o, s:I, s:I}", "window", "since", vg_json_time(since),
                            "until", vg_json_time(until), "s", (double)window / 1000.0, "requested_since",
                            vg_json_time(o->since_ms), "history_since", vg_json_time(o->first_ms), "nodes",
                            cluster ? json_integer((json_int_t)cluster) : json_null(), "incidents", (json_int_t)counted,
                            "interruptions", (json_int_t)interruptions);
    if (behind) json_object_set_new(doc, "clock_behind_s", json_real((double)(newest - until) / 1000.0));
    /* why a figure is null */
    json_t *why = json_object();
    char have[32], need[32], reason[160];
    span(window, have, sizeof have);
    span(VG_ACCT_MIN_HISTORY_MS, need, sizeof need);
    if (behind)
        snprintf(reason, sizeof reason, "the clock is %.0f s behind the store's newest record (stepped back)",
                 (double)(newest - until) / 1000.0);
    else if (!history) snprintf(reason, sizeof reason, "not enough history: %s in the window, at least %s needed", have, need);
    else if (!cluster) snprintf(reason, sizeof reason, "the fleet size is unknown (no scheduler node list; give --nodes)");
    bool rates = history && cluster && !behind;
    if (!rates) {
        json_object_set_new(why, "availability", json_string(reason));
        json_object_set_new(why, "mtbi_s", json_string(reason));
    } else if (!interruptions) {
        snprintf(reason, sizeof reason, "no interruption in %s", have);
        json_object_set_new(why, "mtbi_s", json_string(reason));
    }
    if (!repaired) json_object_set_new(why, "mttr_s", json_string("no repair finished in the window"));
    json_object_set_new(doc, "availability",
                        rates ? json_real(1.0 - lost_ms / ((double)cluster * (double)window)) : json_null());
    json_object_set_new(doc, "mttr_s", repaired ? json_real(repair_s / (double)repaired) : json_null());
    json_object_set_new(doc, "mtbi_s", rates && interruptions
                                           ? json_real((double)cluster * (double)window / 1000.0 / (double)interruptions)
                                           : json_null());
    json_object_set_new(doc, "unmeasured", why);
    json_object_set_new(doc, "node_hours_lost", json_real(lost_ms / 3.6e6));
    json_object_set_new(doc, "causes", cl);
    json_object_set_new(doc, "racks", racks);
    json_t *rl = json_array();
    json_object_foreach(rungs, key, v) json_array_append_new(rl, json_pack("{s:s, s:O, s:O, s:O}", "step", key, "tried",
        json_object_get(v, "tried"), "failed", json_object_get(v, "failed"), "returned", json_object_get(v, "returned")));
    json_decref(rungs);
    json_object_set_new(doc, "repairs", rl);
    json_object_set_new(doc, "rma_handoffs", json_integer((json_int_t)rma));
    json_object_set_new(doc, "per_node", per);
    free(s);
    free(nodes);
    free(per_count);
    return doc;
}
