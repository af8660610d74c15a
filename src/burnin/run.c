/* run.c — one node's burn-in pass: reads the GPU model through the GPU
 * backend (in a watchdog probe), runs the suite's tests from the table in
 * tests.c (tools spawned with argv and a timeout, a loopback server first
 * where the test needs one), and turns failed tests into events, a drain
 * reason and JSON. */
#include "burnin/burnin_int.h"
#include "catalog/catalog.h"
#include "signal/sysfs.h"
#include "util/jsonutil.h"
#include "util/log.h"
#include "util/sbuf.h"
#include "util/spawn.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const suite_names[] = { "quick", "standard", "long" };
static const char *const result_names[] = { "pass", "fail", "unknown", "preempted" };

const char *vg_bi_suite_name(enum vg_bi_suite s)
{
    return s == VG_BI_QUICK ? "quick" : s == VG_BI_STANDARD ? "standard" : s == VG_BI_LONG ? "long" : "?";
}

bool vg_bi_suite_parse(const char *s, enum vg_bi_suite *out)
{
    for (int i = 0; i < 3; i++)
        if (!strcmp(s, suite_names[i])) {
            *out = (enum vg_bi_suite)(1 << i);
            return true;
        }
    return false;
}

const char *vg_bi_result_name(enum vg_bi_result r) { return (unsigned)r < 4 ? result_names[r] : "?"; }

bool vg_bi_result_parse(const char *s, enum vg_bi_result *out)
{
    for (int i = 0; i < 4; i++)
        if (!strcmp(s, result_names[i])) {
            *out = (enum vg_bi_result)i;
            return true;
        }
    return false;
}

/* Whether test t is in suite s of those vendors (NULL: every vendor). */
static bool in_suite(const struct vg_bi_test *t, enum vg_bi_suite s, const char *vendors)
{
    return (t->suites & s) && (!t->vendor || !vendors || vg_bi_vendor_in(vendors, t->vendor));
}

size_t vg_bi_suite_tests(enum vg_bi_suite s, const char *vendors, const char **names, size_t max)
{
    size_t n, k = 0;
    const struct vg_bi_test *t = vg_bi_tests(&n);
    for (size_t i = 0; i < n; i++)
        if (in_suite(&t[i], s, vendors) && k < max) names[k++] = t[i].name;
    return k;
}

/* ---- running a tool ------------------------------------------------------ */

/* The tool's path: the --tool override, else the name when it is on PATH;
 * NULL when it is nowhere. */
static const char *find_tool(const struct vg_bi_opts *o, const char *name, char *buf, size_t n)
{
    for (size_t i = 0; i < o->ntools; i++)
        if (!strcmp(o->tools[i].name, name)) return access(o->tools[i].path, X_OK) == 0 ? o->tools[i].path : NULL;
    const char *path = getenv("PATH");
    if (!path) return NULL;
    for (const char *p = path; *p;) {
        size_t l = strcspn(p, ":");
        snprintf(buf, n, "%.*s/%s", (int)l, l ? p : ".", name);
        if (access(buf, X_OK) == 0) return buf;
        p += l + (p[l] == ':');
    }
    return NULL;
}

/* What the placeholders in a test's arguments become. */
struct subst {
    char gpus[16], ibport[16];
    const char *ibdev;
    const char *nccl_size;   /* the message size the model's busbw floor is defined at (default 8G) */
};

/* argv: the tool, then args with the placeholders replaced. */
static void build_argv(const char *tool, const char *const *args, const struct subst *v, const char **argv)
{
    int a = 0;
    argv[a++] = tool;
    for (int i = 0; args[i] && a < VG_BI_MAX_ARGS + 1; i++)
        argv[a++] = !strcmp(args[i], "{gpus}")        ? v->gpus
                    : !strcmp(args[i], "{ibdev}")     ? v->ibdev
                    : !strcmp(args[i], "{ibport}")    ? v->ibport
                    : !strcmp(args[i], "{nccl_size}") ? v->nccl_size
                                                      : args[i];
    argv[a] = NULL;
}

static bool per_ib_port(const struct vg_bi_test *t)
{
    for (int i = 0; t->args[i]; i++)
        if (!strcmp(t->args[i], "{ibdev}")) return true;
    return false;
}

struct server {
    const char **argv;
    int timeout_ms;
    struct vg_spawn_result r;
};

static void *server_main(void *arg)
{
    struct server *s = arg;
    vg_spawn(s->argv, NULL, NULL, s->timeout_ms, &s->r);
    return NULL;
}

/* Runs the tool once (after its loopback server, if it has one) and applies
 * the test's rule. */
static void run_once(const struct vg_bi_ctx *c, const struct vg_bi_test *t, const char *tool, const struct subst *v,
                     struct vg_bi_outcome *oc)
{
    const char *argv[VG_BI_MAX_ARGS + 2], *sargv[VG_BI_MAX_ARGS + 2];
    build_argv(tool, t->args, v, argv);
    struct server srv = { .argv = sargv, .timeout_ms = t->timeout_s * 1000 };
    pthread_t th;
    bool server = t->server[0] != NULL;
    if (server) {
        build_argv(tool, t->server, v, sargv);
        if (pthread_create(&th, NULL, server_main, &srv)) server = false;
    }
    struct vg_spawn_result r;
    /* the client retries while the server is not yet listening */
    for (int attempt = 0;; attempt++) {
        if (server) vg_sleep_ms(300);
        vg_spawn(argv, NULL, NULL, t->timeout_s * 1000, &r);
        if (!server || r.status == 0 || attempt == 3 ||
            (!strstr(r.out, "Couldn't connect") && !strstr(r.err, "Couldn't connect")))
            break;
        vg_spawn_result_free(&r);
    }
    if (server) {
        pthread_join(th, NULL);
        vg_spawn_result_free(&srv.r);
    }
    if (r.timed_out) {
        oc->result = VG_BI_FAIL;
        snprintf(oc->detail, sizeof oc->detail, "%s did not finish within %d s", t->tool, t->timeout_s);
    } else if (r.status == -1) {
        oc->result = VG_BI_UNKNOWN;
        snprintf(oc->detail, sizeof oc->detail, "%.100s: %.140s", tool, r.err);
    } else {
        struct sbuf all = SBUF_INIT;
        sbuf_add(&all, r.out, r.out_len);
        sbuf_add(&all, r.err, r.err_len);
        t->rule(c, all.s ? all.s : "", all.len, r.status, oc);
        sbuf_free(&all);
    }
    vg_spawn_result_free(&r);
}

static void run_tool(const struct vg_bi_ctx *c, const struct vg_bi_test *t, struct vg_bi_outcome *oc)
{
    char path[1024];
    const char *tool = find_tool(c->o, t->tool, path, sizeof path);
    if (!tool) {
        oc->result = VG_BI_UNKNOWN;
        if (!strcmp(t->tool, "vigil-gpu"))
            snprintf(oc->detail, sizeof oc->detail, "vigil-gpu not found: vigil's CUDA tests are built by "
                                                    "`make cuda` on a machine with CUDA, then installed on PATH");
        else snprintf(oc->detail, sizeof oc->detail, "%s not found on PATH (or --tool %s=PATH)", t->tool, t->tool);
        return;
    }
    const struct vg_bi_threshold *busbw = vg_bi_threshold_find(c->o->th, c->model, "nccl-busbw");
    struct subst v = { .ibdev = "", .nccl_size = busbw ? busbw->at : "8G" };
    snprintf(v.gpus, sizeof v.gpus, "%d", c->gpus > 0 ? c->gpus : 1);
    if (!per_ib_port(t)) return run_once(c, t, tool, &v, oc);
    if (!c->nib) {
        oc->result = VG_BI_UNKNOWN;
        snprintf(oc->detail, sizeof oc->detail, "no ACTIVE InfiniBand port to test");
        return;
    }
    /* once per port: the first failure, else the lowest figure */
    for (int i = 0; i < c->nib; i++) {
        struct vg_bi_outcome one = *oc;
        v.ibdev = c->ib[i].dev;
        snprintf(v.ibport, sizeof v.ibport, "%d", c->ib[i].port);
        run_once(c, t, tool, &v, &one);
        char detail[sizeof one.detail];
        snprintf(detail, sizeof detail, "%s:%d: %.200s", c->ib[i].dev, c->ib[i].port, one.detail);
        memcpy(one.detail, detail, sizeof detail);
        bool worse = i == 0 || (one.result == VG_BI_FAIL && oc->result != VG_BI_FAIL) ||
                     (one.result == oc->result && one.has_value && oc->has_value && one.value < oc->value) ||
                     (one.result == VG_BI_UNKNOWN && oc->result == VG_BI_PASS);
        if (worse) *oc = one;
        if (oc->result == VG_BI_FAIL) break;
    }
}

/* ---- the pass ------------------------------------------------------------ */

enum vg_bi_result vg_bi_node_result(const struct vg_bi_outcome *t, size_t n)
{
    enum vg_bi_result res = VG_BI_PASS;
    for (size_t i = 0; i < n; i++) {
        if (t[i].result == VG_BI_FAIL) return VG_BI_FAIL;
        if (t[i].result != VG_BI_PASS) res = t[i].result == VG_BI_PREEMPTED ? VG_BI_PREEMPTED : VG_BI_UNKNOWN;
    }
    return res;
}

int vg_bi_run(const struct vg_bi_opts *o, struct vg_bi_node *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->gpus = -1;
    if (!o->node || !*o->node || strlen(o->node) >= sizeof out->node) {
        snprintf(err, errlen, "a node name is required");
        return -1;
    }
    size_t nt;
    const struct vg_bi_test *t = vg_bi_tests(&nt);
    bool found = !o->only;
    for (size_t i = 0; i < nt && !found; i++) found = !strcmp(t[i].name, o->only);
    if (!found) {
        snprintf(err, errlen, "no burn-in test is named '%s'", o->only);
        return -1;
    }
    if (o->vendors && vg_bi_vendors_check(o->vendors, err, errlen)) return -1;
    int64_t start = vg_mono_ms();
    vg_strlcpy(out->node, o->node, sizeof out->node);
    out->suite = o->suite;
    struct vg_gpu_probe_result probe;
    vg_gpu_probe(NULL, 10000, &probe);
    if (probe.n > 0) vg_strlcpy(out->model, probe.gpus[0].model, sizeof out->model);
    out->gpus = probe.count;
    vg_bi_pick_vendors(o, &probe, out);
    struct vg_bi_ctx c = { .o = o, .model = out->model, .gpus = probe.count, .probe = &probe };
    struct vg_ib_port *ports;
    size_t np = vg_ib_ports(o->root, &ports);
    for (size_t i = 0; i < np && c.nib < 16; i++)
        if (ports[i].state == 4 && strcmp(ports[i].link_layer, "Ethernet")) {
            vg_strlcpy(c.ib[c.nib].dev, ports[i].dev, sizeof c.ib[0].dev);
            c.ib[c.nib++].port = ports[i].port;
        }
    free(ports);
    out->tests = vg_xcalloc(nt, sizeof *out->tests);
    for (size_t i = 0; i < nt; i++) {
        if (o->only ? strcmp(t[i].name, o->only) != 0 : !in_suite(&t[i], o->suite, out->vendors)) continue;
        struct vg_bi_outcome *oc = &out->tests[out->ntests++];
        vg_strlcpy(oc->name, t[i].name, sizeof oc->name);
        int64_t t0 = vg_mono_ms();
        if (t[i].builtin) t[i].builtin(&c, oc);
        else run_tool(&c, &t[i], oc);
        if (oc->result == VG_BI_FAIL && !oc->kind[0]) vg_strlcpy(oc->kind, t[i].kind, sizeof oc->kind);
        if (oc->result != VG_BI_FAIL) oc->kind[0] = 0;
        oc->elapsed_ms = (long)(vg_mono_ms() - t0);
        vg_debug("burnin %s %s: %s — %s", o->node, oc->name, vg_bi_result_name(oc->result), oc->detail);
    }
    vg_gpu_probe_free(&probe);
    out->result = vg_bi_node_result(out->tests, out->ntests);
    out->elapsed_ms = (long)(vg_mono_ms() - start);
    return 0;
}

void vg_bi_node_free(struct vg_bi_node *n)
{
    free(n->tests);
    n->tests = NULL;
    n->ntests = 0;
}

/* ---- verdicts ------------------------------------------------------------ */

int vg_bi_events(const struct vg_bi_node *n, const struct vg_catalog *cat, struct vg_event *ev, int max)
{
    int k = 0;
    for (size_t i = 0; i < n->ntests; i++) {
        const struct vg_bi_outcome *t = &n->tests[i];
        if (t->result != VG_BI_FAIL) continue;
        struct vg_event *e = vg_event_append(ev, &k, max, n->node, "burnin", t->kind, "");
        if (!e) break;
        snprintf(e->raw, sizeof e->raw, "burnin %s: %s", t->name, t->detail);
        vg_catalog_classify(cat, e);
    }
    return k;
}

void vg_bi_reason(const struct vg_bi_node *n, char *buf, size_t len)
{
    size_t failed = 0, first = 0;
    buf[0] = 0;
    for (size_t i = 0; i < n->ntests; i++)
        if (n->tests[i].result == VG_BI_FAIL && failed++ == 0) first = i;
    if (!failed) return;
    const struct vg_bi_outcome *t = &n->tests[first];
    char more[32] = "", what[200];
    if (failed > 1) snprintf(more, sizeof more, " (+%zu more)", failed - 1);
    snprintf(what, sizeof what, "%.150s", t->detail);
    for (char *c = what; *c; c++)
        if (*c == '\n' || *c == '\r' || *c == '\t') *c = ' ';
    snprintf(buf, len, "vigil: burnin %s: %s%s", t->name, what, more);
}

json_t *vg_bi_node_to_json(const struct vg_bi_node *n, const struct vg_catalog *cat)
{
    json_t *tests = json_array(), *events = json_array();
    for (size_t i = 0; i < n->ntests; i++) {
        const struct vg_bi_outcome *t = &n->tests[i];
        json_t *j = json_pack("{s:s, s:s, s:o, s:s, s:o, s:s, s:I}", "name", t->name, "result",
                              vg_bi_result_name(t->result), "value", t->has_value ? json_real(t->value) : json_null(),
                              "unit", t->unit, "expected", t->expected[0] ? json_string(t->expected) : json_null(),
                              "detail", t->detail, "elapsed_ms", (json_int_t)t->elapsed_ms);
        vg_json_set_str(j, "kind", t->kind[0] ? t->kind : NULL);
        vg_json_set_str(j, "source", t->source[0] ? t->source : NULL);
        json_array_append_new(tests, j);
    }
    struct vg_event ev[32];
    int ne = vg_bi_events(n, cat, ev, 32);
    for (int i = 0; i < ne; i++) json_array_append_new(events, vg_event_to_json(&ev[i]));
    char reason[256];
    vg_bi_reason(n, reason, sizeof reason);
    json_t *j = json_pack("{s:s, s:s, s:s, s:s, s:I, s:o, s:o}", "node", n->node, "result", vg_bi_result_name(n->result),
                          "suite", vg_bi_suite_name(n->suite), "model", n->model, "elapsed_ms",
                          (json_int_t)n->elapsed_ms, "tests", tests, "events", events);
    json_object_set_new(j, "gpus", n->gpus >= 0 ? json_integer(n->gpus) : json_null());
    json_t *vendors = json_array();
    for (const char *p = n->vendors; *p;) {
        size_t l = strcspn(p, ",");
        json_array_append_new(vendors, json_stringn(p, l));
        p += l + (p[l] == ',');
    }
    json_object_set_new(j, "vendors", vendors);
    json_object_set_new(j, "picked", json_string(n->picked));
    vg_json_set_str(j, "reason", reason[0] ? reason : NULL);
    return j;
}
