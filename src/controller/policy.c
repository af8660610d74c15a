/* policy.c — the controller's decisions and its policy file; see policy.h. */
#include "controller/policy.h"
#include "orch/orch.h"
#include "util/hostlist.h"
#include "util/rootfs.h"
#include "util/strutil.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VG_POLICY_MAX_NODES 100000

void vg_policy_defaults(struct vg_policy *p)
{
    memset(p, 0, sizeof *p);
    p->down_at = VG_ACT_RESET_GPU;
    p->drain_at = VG_ACT_RESTART_APP;
    p->domain_max_unavailable = 2;
    p->breaker_percent = 10;
    p->breaker_window_ms = 600 * 1000;
    vg_strlcpy(p->spare_pool, "vigil_spares", sizeof p->spare_pool);
    vg_ladder_defaults(&p->ladder);
}

static void free_strv(char **v, size_t n)
{
    for (size_t i = 0; v && i < n; i++) free(v[i]);
    free(v);
}

void vg_policy_free(struct vg_policy *p)
{
    free_strv(p->spares, p->nspares);
    free_strv(p->domain_nodes, p->ndomain);
    free_strv(p->domain_names, p->ndomain);
    vg_ladder_free(&p->ladder);
    vg_argv_free(p->healthcheck);
    vg_policy_defaults(p);
}

static int parse_line(struct vg_policy *p, char *key, char *val, char *why, size_t n)
{
    char **names;
    int cnt;
    int ladder = vg_ladder_parse_line(&p->ladder, key, val, why, n);
    if (ladder != 1) return ladder;
    if (!strcmp(key, "down_at") || !strcmp(key, "drain_at")) {
        enum vg_action a;
        if (!vg_action_parse(val, &a)) return snprintf(why, n, "%s: unknown action '%s'", key, val), -1;
        *(key[1] == 'o' ? &p->down_at : &p->drain_at) = a;
    } else if (!strcmp(key, "spares")) {
        if ((cnt = vg_hostlist_expand(val, &names, VG_POLICY_MAX_NODES)) < 0)
            return snprintf(why, n, "spares: bad host list '%s'", val), -1;
        free_strv(p->spares, p->nspares);
        p->spares = names;
        p->nspares = (size_t)cnt;
    } else if (vg_startswith(key, "domain ")) {
        char *dname = vg_trim(key + 7);
        if (!*dname || strchr(dname, ' ')) return snprintf(why, n, "domain: needs one name: 'domain NAME = NODES'"), -1;
        if ((cnt = vg_hostlist_expand(val, &names, VG_POLICY_MAX_NODES)) < 0)
            return snprintf(why, n, "domain %s: bad host list '%s'", dname, val), -1;
        p->domain_nodes = vg_xrealloc(p->domain_nodes, (p->ndomain + (size_t)cnt) * sizeof(char *));
        p->domain_names = vg_xrealloc(p->domain_names, (p->ndomain + (size_t)cnt) * sizeof(char *));
        for (int i = 0; i < cnt; i++) {
            if (vg_policy_domain(p, names[i])) {
                snprintf(why, n, "domain %s: node %s is already in domain %s", dname, names[i],
                         vg_policy_domain(p, names[i]));
                for (int k = i; k < cnt; k++) free(names[k]); /* the earlier ones belong to p now */
                free(names);
                return -1;
            }
            p->domain_nodes[p->ndomain] = names[i];
            p->domain_names[p->ndomain++] = vg_xstrdup(dname);
        }
        free(names);
    } else if (!strcmp(key, "domain_max_unavailable")) {
        long v;
        if (!vg_parse_long(val, &v) || v < 0 || v > VG_POLICY_MAX_NODES)
            return snprintf(why, n, "domain_max_unavailable: '%s' is not a count", val), -1;
        p->domain_max_unavailable = (int)v;
    } else if (!strcmp(key, "breaker")) {
        long pct, secs;
        char tail[8];
        if (sscanf(val, "%ld %% / %ld %7s", &pct, &secs, tail) != 3 || strcmp(tail, "s") || pct < 0 || pct > 100 ||
            secs <= 0)
            return snprintf(why, n, "breaker: expected 'PERCENT%% / SECONDSs', got '%s'", val), -1;
        p->breaker_percent = (int)pct;
        p->breaker_window_ms = secs * 1000;
    } else if (!strcmp(key, "spare_pool") || !strcmp(key, "spare_reservation")) {
        if (!*val || strlen(val) >= sizeof p->spare_pool || strpbrk(val, " \t,"))
            return snprintf(why, n, "%s: bad name '%s'", key, val), -1;
        vg_strlcpy(p->spare_pool, val, sizeof p->spare_pool);
    } else if (!strcmp(key, "view_max_age")) {
        if (!vg_duration_ms(val, &p->view_max_age_ms) || p->view_max_age_ms > 600 * 1000)
            return snprintf(why, n, "%s: '%s' is not a duration of at most 10m (seconds, or Nm / Ns)", key, val), -1;
    } else if (!strcmp(key, "healthcheck")) {
        vg_argv_free(p->healthcheck);
        p->healthcheck = vg_argv_split(val);
        if (!p->healthcheck[0]) return snprintf(why, n, "%s: empty command", key), -1;
    } else {
        return snprintf(why, n, "unknown key '%s'", key), -1;
    }
    return 0;
}

int vg_policy_parse(struct vg_policy *p, const char *text, const char *name, char *err, size_t errlen)
{
    char *copy = vg_xstrdup(text);
    int lineno = 0, rc = 0;
    char *line = copy;
    while (line && !rc) {
        char *next = strchr(line, '\n');
        if (next) *next++ = 0;
        lineno++;
        char *hash = strchr(line, '#');
        if (hash) *hash = 0;
        char *t = vg_trim(line);
        if (*t) {
            char why[200];
            char *eq = strchr(t, '=');
            if (!eq) {
                snprintf(why, sizeof why, "expected 'key = value'");
                rc = -1;
            } else {
                *eq = 0;
                rc = parse_line(p, vg_trim(t), vg_trim(eq + 1), why, sizeof why);
            }
            if (rc) snprintf(err, errlen, "%s:%d: %s", name, lineno, why);
        }
        line = next;
    }
    free(copy);
    char why[300];
    if (!rc && vg_ladder_check(&p->ladder, why, sizeof why)) {
        snprintf(err, errlen, "%s: %s", name, why);
        rc = -1;
    }
    if (!rc && p->drain_at > p->down_at) {
        snprintf(err, errlen, "%s: drain_at (%s) is above down_at (%s)", name, vg_action_name(p->drain_at),
                 vg_action_name(p->down_at));
        rc = -1;
    }
    return rc;
}

int vg_policy_load(struct vg_policy *p, const char *path, char *err, size_t errlen)
{
    char *text;
    if (vg_read_file(NULL, path, 1 << 20, &text, NULL)) {
        snprintf(err, errlen, "%s: cannot read the policy file", path);
        return -1;
    }
    int rc = vg_policy_parse(p, text, path, err, errlen);
    free(text);
    return rc;
}

/* A node's domain: the policy's `domain` lines first, else the
 * orchestrator's, else the one its agent reported. */
static const char *domain_of(const struct vg_policy *p, const struct vg_node_view *v)
{
    const char *d = vg_policy_domain(p, v->name);
    return d ? d : v->domain && *v->domain ? v->domain : vg_domains_of(p->learned, v->name);
}

const char *vg_policy_node_domain(const struct vg_policy *p, const char *node)
{
    const char *d = vg_policy_domain(p, node);
    return d ? d : vg_domains_of(p->learned, node);
}

const char *vg_policy_domain(const struct vg_policy *p, const char *node)
{
    for (size_t i = 0; i < p->ndomain; i++)
        if (!strcmp(p->domain_nodes[i], node)) return p->domain_names[i];
    return NULL;
}

bool vg_policy_acts(const struct vg_policy *p, enum vg_action action) { return action >= p->drain_at; }

static void add(char ***v, size_t *n, const char *s)
{
    *v = vg_xrealloc(*v, (*n + 1) * sizeof **v);
    (*v)[(*n)++] = vg_xstrdup(s);
}

static bool contains(char *const *v, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(v[i], s)) return true;
    return false;
}

/* A spare that can join production now: in the pool, up, not being isolated. */
static bool promotable(const struct vg_policy *p, const struct vg_node_view *cluster, size_t n, const char *name,
                       const struct vg_decision *d, const char **dom)
{
    for (size_t j = 0; j < n; j++)
        if (!strcmp(cluster[j].name, name)) {
            *dom = domain_of(p, &cluster[j]);
            return cluster[j].spare && !cluster[j].unavailable && !contains(d->isolate, d->nisolate, name);
        }
    return false;
}

/* The spares to promote, in the pool's order.  A whole domain isolated (the
 * domain rule: an NVLink domain is not mended tray by tray) is replaced by
 * `want` spares of one other domain when one holds that many; a single node
 * by a spare of its own domain first. */
static void choose_spares(const struct vg_policy *p, const struct vg_node_view *cluster, size_t n, const char *dom,
                          const char *whole, size_t want, struct vg_decision *d)
{
    const char *sd, *pick = NULL;
    if (whole) {   /* the first domain, in the pool's order, with enough spares */
        for (size_t s = 0; s < p->nspares && !pick; s++) {
            if (!promotable(p, cluster, n, p->spares[s], d, &sd) || !sd || !strcmp(sd, whole)) continue;
            size_t have = 0;
            for (size_t t = 0; t < p->nspares; t++) {
                const char *td;
                if (promotable(p, cluster, n, p->spares[t], d, &td) && td && !strcmp(td, sd)) have++;
            }
            if (have >= want) pick = sd;
        }
        size_t l = strlen(d->note);
        if (pick) snprintf(d->note + l, sizeof d->note - l, "; spare domain %s promoted", pick);
        else if (want) snprintf(d->note + l, sizeof d->note - l, "; no spare domain holds %zu: spares from any", want);
    }
    const char *prefer = pick ? pick : whole ? NULL : dom;
    for (int pass = prefer ? 0 : 1; pass < 2; pass++)   /* pass 0: the preferred domain only */
        for (size_t s = 0; s < p->nspares && d->npromote < want; s++)
            if (promotable(p, cluster, n, p->spares[s], d, &sd) && !contains(d->promote, d->npromote, p->spares[s]) &&
                (pass || (sd && !strcmp(sd, prefer))) && !(pick && pass))
                add(&d->promote, &d->npromote, p->spares[s]);
}

/* Isolations within the window whose node is still out (a node that came
 * back no longer counts); older entries are dropped. */
static size_t recent(struct vg_isolation_log *log, int64_t now, int64_t window, const struct vg_node_view *cluster,
                     size_t n)
{
    size_t keep = 0, out = 0;
    for (size_t i = 0; i < log->n; i++) {
        if (now - log->e[i].at > window) continue;
        log->e[keep++] = log->e[i];
        for (size_t k = 0; k < n; k++)
            if (!strcmp(cluster[k].name, log->e[i].node) && cluster[k].unavailable) out++;
    }
    log->n = keep;
    return out;
}

void vg_isolation_log_add(struct vg_isolation_log *log, int64_t now, const char *node)
{
    if (log->n == log->cap) {
        log->cap = log->cap ? log->cap * 2 : 16;
        log->e = vg_xrealloc(log->e, log->cap * sizeof *log->e);
    }
    log->e[log->n].at = now;
    vg_strlcpy(log->e[log->n++].node, node, sizeof log->e[0].node);
}

void vg_policy_decide(const struct vg_policy *p, const struct vg_node_view *cluster, size_t n, const char *node,
                      enum vg_action action, const char *what, int64_t now, struct vg_isolation_log *log,
                      struct vg_decision *d)
{
    memset(d, 0, sizeof *d);
    snprintf(d->reason, sizeof d->reason, VG_REASON_PREFIX " %s", what);
    const struct vg_node_view *self = NULL;
    for (size_t i = 0; i < n; i++)
        if (!strcmp(cluster[i].name, node)) self = &cluster[i];
    if (!vg_policy_acts(p, action)) {
        d->op = VG_OP_RECORD;
        snprintf(d->note, sizeof d->note, "%s: recorded only (below drain_at)", vg_action_name(action));
        return;
    }
    d->op = action >= p->down_at ? VG_OP_DOWN : VG_OP_DRAIN;
    if (!self) {
        d->held = true;
        snprintf(d->note, sizeof d->note, "node %s is not in the cluster", node);
        return;
    }
    if (self->unavailable && !self->ours) {
        d->held = true;
        snprintf(d->note, sizeof d->note, "left alone: %s is unavailable for a reason vigil did not write", node);
        return;
    }
    if (self->unavailable) {
        /* Already isolated by vigil: only a DOWN escalates a DRAIN. */
        if (d->op == VG_OP_DOWN) add(&d->isolate, &d->nisolate, node);
        snprintf(d->note, sizeof d->note, "already isolated by vigil%s", d->nisolate ? "; escalated to DOWN" : "");
        return;
    }
    add(&d->isolate, &d->nisolate, node);

    const char *dom = NULL;
    for (size_t i = 0; i < n && !dom; i++)
        if (!strcmp(cluster[i].name, node)) dom = domain_of(p, &cluster[i]);
    if (!dom) dom = vg_policy_domain(p, node);
    if (dom) {
        size_t members = 0, down = 0;
        for (size_t i = 0; i < n; i++) {
            const char *nd = domain_of(p, &cluster[i]);
            if (!nd || strcmp(nd, dom)) continue;
            members++;
            if (cluster[i].unavailable || !strcmp(cluster[i].name, node)) down++;
        }
        if ((int)down > p->domain_max_unavailable) {
            for (size_t i = 0; i < n; i++) {
                const char *nd = domain_of(p, &cluster[i]);
                if (nd && !strcmp(nd, dom) && !cluster[i].unavailable && !contains(d->isolate, d->nisolate, cluster[i].name))
                    add(&d->isolate, &d->nisolate, cluster[i].name);
            }
            snprintf(d->reason, sizeof d->reason, VG_REASON_PREFIX " domain %s: %zu of %zu nodes unavailable (%s on %s)",
                     dom, down, members, what, node);
            snprintf(d->note, sizeof d->note, "domain rule: %s has %zu of %zu nodes unavailable (> %d)", dom, down,
                     members, p->domain_max_unavailable);
        }
    }

    size_t allowed = n * (size_t)p->breaker_percent / 100;
    if (allowed < 1) allowed = 1;
    size_t already = recent(log, now, p->breaker_window_ms, cluster, n);
    if (already + d->nisolate > allowed) {
        d->held = true;
        snprintf(d->note, sizeof d->note,
                 "breaker: %zu isolations within %llds would exceed %d%% of %zu nodes (%zu); holding",
                 already + d->nisolate, (long long)(p->breaker_window_ms / 1000), p->breaker_percent, n, allowed);
        return;
    }
    for (size_t i = 0; i < d->nisolate; i++) vg_isolation_log_add(log, now, d->isolate[i]);

    size_t want = 0;
    for (size_t i = 0; i < d->nisolate; i++) {
        bool is_spare = false;
        for (size_t j = 0; j < n; j++)
            if (!strcmp(cluster[j].name, d->isolate[i]) && cluster[j].spare) is_spare = true;
        if (!is_spare) want++;
    }
    choose_spares(p, cluster, n, dom, d->nisolate > 1 ? dom : NULL, want, d);
    if (d->npromote < want) {
        size_t l = strlen(d->note);
        snprintf(d->note + l, sizeof d->note - l, "%sspare pool short by %zu", l ? "; " : "", want - d->npromote);
    }
}

void vg_decision_free(struct vg_decision *d)
{
    free_strv(d->isolate, d->nisolate);
    free_strv(d->promote, d->npromote);
    memset(d, 0, sizeof *d);
}

void vg_isolation_log_undo(struct vg_isolation_log *log, const struct vg_decision *d)
{
    for (size_t i = 0; i < d->nisolate; i++)
        for (size_t k = log->n; k-- > 0;)
            if (!strcmp(log->e[k].node, d->isolate[i])) {
                memmove(&log->e[k], &log->e[k + 1], (log->n - k - 1) * sizeof *log->e);
                log->n--;
                break;
            }
}

void vg_isolation_log_free(struct vg_isolation_log *log)
{
    free(log->e);
    memset(log, 0, sizeof *log);
}
