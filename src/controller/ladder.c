/* ladder.c — the repair ladder's policy lines and the choice of rungs for a
 * cause; see ladder.h.  remedy.c climbs it. */
#include "controller/ladder.h"
#include "util/sbuf.h"
#include "util/strutil.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DAY_MS (24LL * 3600 * 1000)

void vg_ladder_defaults(struct vg_ladder *l)
{
    memset(l, 0, sizeof *l);
    l->timeout_ms = 30 * 60 * 1000;
    l->repeat_window_ms = 7 * DAY_MS;
    vg_strlcpy(l->gate_suite, "standard", sizeof l->gate_suite);
    l->new_node_every_ms = 10000;
}

void vg_argv_free(char **v)
{
    for (size_t i = 0; v && v[i]; i++) free(v[i]);
    free(v);
}

char **vg_argv_split(const char *s)
{
    size_t n = 0, cap = 8;
    char **v = vg_xmalloc(cap * sizeof *v);
    char *copy = vg_xstrdup(s), *save = NULL;
    for (char *t = strtok_r(copy, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
        if (n + 1 >= cap) v = vg_xrealloc(v, (cap *= 2) * sizeof *v);
        v[n++] = vg_xstrdup(t);
    }
    v[n] = NULL;
    free(copy);
    return v;
}

char **vg_argv_expand(char *const *tmpl, const char *const *keys, const char *const *vals)
{
    size_t n = 0;
    while (tmpl[n]) n++;
    char **v = vg_xcalloc(n + 1, sizeof *v);
    for (size_t i = 0; i < n; i++) {
        struct sbuf b = SBUF_INIT;
        for (const char *p = tmpl[i]; *p;) {
            size_t k = 0, len = 0;
            for (; keys[k]; k++) {
                len = strlen(keys[k]);
                if (p[0] == '{' && !strncmp(p + 1, keys[k], len) && p[len + 1] == '}') break;
            }
            if (keys[k]) sbuf_puts(&b, vals[k]), p += len + 2;
            else sbuf_putc(&b, *p++);
        }
        v[i] = sbuf_take(&b);
    }
    return v;
}

void vg_ladder_free(struct vg_ladder *l)
{
    for (size_t i = 0; i < l->nattach; i++) vg_argv_free(l->attach[i].argv);
    for (size_t i = 0; i < l->nrung; i++) vg_argv_free(l->rung[i].argv);
    free(l->rules);
    vg_argv_free(l->rma_command);
    vg_argv_free(l->gate);
    vg_ladder_defaults(l);
}

static bool good_name(const char *s)
{
    if (!*s || strlen(s) >= 32) return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-' || *s == '_')) return false;
    return true;
}

/* The rung named name, made (without a command yet) when new; NULL with why
 * when the name is bad or the ladder is full. */
static struct vg_rung *rung_named(struct vg_ladder *l, const char *key, const char *name, char *why, size_t n)
{
    if (!good_name(name))
        return snprintf(why, n, "%s: '%s' is not a step name (a-z, 0-9, '-', '_'; '%s NAME = …')", key, name, key), NULL;
    for (size_t i = 0; i < l->nrung; i++)
        if (!strcmp(l->rung[i].name, name)) return &l->rung[i];
    if (l->nrung == VG_RUNGS_MAX) return snprintf(why, n, "%s %s: more than %d repair steps", key, name, VG_RUNGS_MAX), NULL;
    struct vg_rung *r = &l->rung[l->nrung++];
    memset(r, 0, sizeof *r);
    vg_strlcpy(r->name, name, sizeof r->name);
    return r;
}

static int rung_line(struct vg_ladder *l, const char *name, const char *val, char *why, size_t n)
{
    struct vg_rung *r = rung_named(l, "repair", name, why, n);
    if (!r) return -1;
    char **argv = vg_argv_split(val);
    if (!argv[0]) {
        vg_argv_free(argv);
        return snprintf(why, n, "repair %s: empty command", name), -1;
    }
    vg_argv_free(r->argv);   /* a later line replaces the command */
    r->argv = argv;
    return 0;
}

static int rule_line(struct vg_ladder *l, const char *cause, const char *val, char *why, size_t n)
{
    if (strlen(cause) >= sizeof l->rules[0].cause) return snprintf(why, n, "ladder: cause '%s' too long", cause), -1;
    struct vg_ladder_rule r = { .n = 0 };
    vg_strlcpy(r.cause, cause, sizeof r.cause);
    char **names = vg_argv_split(val);
    int rc = 0;
    for (size_t i = 0; names[i] && !rc; i++) {
        if (r.n == VG_RUNGS_MAX) rc = (snprintf(why, n, "ladder: more than %d steps", VG_RUNGS_MAX), -1);
        else if (!good_name(names[i])) rc = (snprintf(why, n, "ladder: '%s' is not a step name", names[i]), -1);
        else vg_strlcpy(r.names[r.n++], names[i], sizeof r.names[0]);
    }
    vg_argv_free(names);
    if (!rc && !r.n) rc = (snprintf(why, n, "ladder%s%s: no steps", *cause ? " " : "", cause), -1);
    if (rc) return -1;
    for (size_t i = 0; i < l->nrules; i++)
        if (!strcmp(l->rules[i].cause, cause)) return l->rules[i] = r, 0;
    l->rules = vg_xrealloc(l->rules, (l->nrules + 1) * sizeof *l->rules);
    l->rules[l->nrules++] = r;
    return 0;
}

int vg_ladder_parse_line(struct vg_ladder *l, const char *key, const char *val, char *why, size_t n)
{
    if (vg_startswith(key, "repair ")) return rung_line(l, key + 7, val, why, n);
    if (!strcmp(key, "remediate")) return rung_line(l, "remediate", val, why, n);
    if (!strcmp(key, "ladder")) return rule_line(l, "", val, why, n);
    if (vg_startswith(key, "ladder ")) return rule_line(l, key + 7, val, why, n);
    bool rung_timeout = vg_startswith(key, "repair_timeout "), every = !strcmp(key, "new_node_every");
    if (!strcmp(key, "repair_timeout") || !strcmp(key, "repeat_window") || rung_timeout || every) {
        bool positive = strcmp(key, "repeat_window") != 0;   /* a window may be 0 (no climbing) */
        int64_t ms;
        if (!vg_duration_ms(val, &ms) || (positive && !ms))
            return snprintf(why, n, "%s: '%s' is not a duration (seconds, or Nd / Nh / Nm / Ns%s)", key, val,
                            positive ? ", more than 0" : ""), -1;
        if (rung_timeout) {   /* repair_timeout NAME: that rung's own */
            struct vg_rung *r = rung_named(l, "repair_timeout", key + 15, why, n);
            if (!r) return -1;
            r->timeout_ms = ms;
        } else
            *(every ? &l->new_node_every_ms : !strcmp(key, "repair_timeout") ? &l->timeout_ms : &l->repeat_window_ms) = ms;
        return 0;
    }
    if (!strcmp(key, "burnin_gate")) {
        vg_argv_free(l->gate);
        l->gate = vg_argv_split(val);
        if (!l->gate[0]) return snprintf(why, n, "burnin_gate: empty command"), -1;
        return 0;
    }
    if (!strcmp(key, "burnin_suite") || !strcmp(key, "new_node_suite")) {
        if (strcmp(val, "quick") && strcmp(val, "standard") && strcmp(val, "long"))
            return snprintf(why, n, "%s: '%s' is not quick, standard or long", key, val), -1;
        if (!strcmp(key, "burnin_suite")) vg_strlcpy(l->gate_suite, val, sizeof l->gate_suite);
        else vg_strlcpy(l->new_node_suite, val, sizeof l->new_node_suite);
        return 0;
    }
    if (!strcmp(key, "rma_dir")) {
        if (!*val || strlen(val) >= sizeof l->rma_dir) return snprintf(why, n, "rma_dir: bad directory '%s'", val), -1;
        vg_strlcpy(l->rma_dir, val, sizeof l->rma_dir);
        return 0;
    }
    if (vg_startswith(key, "rma_attach ")) {
        const char *name = key + 11;
        if (!good_name(name)) return snprintf(why, n, "rma_attach: '%s' is not a name (a-z, 0-9, '-', '_')", name), -1;
        size_t i = 0;
        while (i < l->nattach && strcmp(l->attach[i].name, name)) i++;
        if (i == VG_ATTACH_MAX) return snprintf(why, n, "rma_attach %s: more than %d attachments", name, VG_ATTACH_MAX), -1;
        char **argv = vg_argv_split(val);
        if (!argv[0]) {
            vg_argv_free(argv);
            return snprintf(why, n, "rma_attach %s: empty command", name), -1;
        }
        if (i == l->nattach) vg_strlcpy(l->attach[l->nattach++].name, name, sizeof l->attach[0].name);
        vg_argv_free(l->attach[i].argv);   /* a later line replaces the command */
        l->attach[i].argv = argv;
        return 0;
    }
    if (!strcmp(key, "rma_command")) {
        vg_argv_free(l->rma_command);
        l->rma_command = vg_argv_split(val);
        if (!l->rma_command[0]) return snprintf(why, n, "rma_command: empty command"), -1;
        return 0;
    }
    return 1;
}

static const struct vg_rung *find(const struct vg_ladder *l, const char *name)
{
    for (size_t i = 0; i < l->nrung; i++)
        if (!strcmp(l->rung[i].name, name)) return &l->rung[i];
    return NULL;
}

int vg_ladder_check(const struct vg_ladder *l, char *why, size_t n)
{
    if (l->new_node_suite[0] && !l->gate)
        return snprintf(why, n, "new_node_suite: needs a 'burnin_gate = COMMAND' line to run the suite with"), -1;
    for (size_t i = 0; i < l->nrung; i++)
        if (!l->rung[i].argv)
            return snprintf(why, n, "repair_timeout %s: no 'repair %s = COMMAND' line", l->rung[i].name,
                            l->rung[i].name), -1;
    for (size_t i = 0; i < l->nrules; i++)
        for (size_t k = 0; k < l->rules[i].n; k++)
            if (!find(l, l->rules[i].names[k]))
                return snprintf(why, n, "ladder%s%s: '%s' is not a repair step (no 'repair %s = COMMAND' line)",
                                *l->rules[i].cause ? " " : "", l->rules[i].cause, l->rules[i].names[k],
                                l->rules[i].names[k]),
                       -1;
    return 0;
}

size_t vg_ladder_for(const struct vg_ladder *l, const char *cause, const struct vg_rung **out)
{
    const struct vg_ladder_rule *r = NULL;
    for (size_t i = 0; i < l->nrules && !r; i++)
        if (*cause && !strcmp(l->rules[i].cause, cause)) r = &l->rules[i];
    for (size_t i = 0; i < l->nrules && !r; i++)
        if (!*l->rules[i].cause) r = &l->rules[i];
    if (!r) {
        for (size_t i = 0; i < l->nrung; i++) out[i] = &l->rung[i];
        return l->nrung;
    }
    for (size_t i = 0; i < r->n; i++) out[i] = find(l, r->names[i]);
    return r->n;
}

void vg_event_cause_name(const struct vg_event *e, char *buf, size_t n)
{
    if (e->code >= 0) snprintf(buf, n, "%s %d", e->kind, e->code);
    else snprintf(buf, n, "%s", e->kind);
}
