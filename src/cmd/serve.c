/* serve.c — `vigil serve`: the cluster controller.  Receives agents' events
 * over HTTP (authenticated with MUNGE or a token), records incidents in SQLite
 * (WAL; an accepted incident survives kill -9) and serves them back to
 * holders of the read token.
 *   vigil serve [--listen ADDR:PORT] [--db FILE] [--auth munge|token|none]
 *               [--secret-file F] [--token-file F --allow-shared-token]
 *               [--read-token-file F] [--munge-socket S] [--tls-cert F --tls-key F]
 *               [--window SECONDS] [--port-file F] [--policy FILE]
 *               [--slurm-conf FILE] [--dry-run] [--max-connections N]
 *               [--max-per-client N]
 * Each new incident goes to the executor, which applies the policy to Slurm.
 * On SIGTERM/SIGINT: stop accepting, answer what was taken, stop the executor;
 * exit within 6 s of the signal (queued incidents are in the store and resume
 * at restart). */
#include "cmd/cmd.h"
#include "cmd/opts.h"
#include "cmd/serve_auth.h"
#include "cmd/serve_fleet.h"
#include "catalog/catalog.h"
#include "wire/auth.h"
#include "controller/commit.h"
#include "controller/election.h"
#include "controller/executor.h"
#include "controller/fleetview.h"
#include "controller/policy.h"
#include "controller/heartbeat.h"
#include "controller/httpapi.h"
#include "controller/nodeset.h"
#include "controller/ingest.h"
#include "controller/nodereport.h"
#include "controller/store.h"
#include "controller/storeguard.h"
#include "report/audit_report.h"
#include "util/jsonutil.h"
#include "orch/orch.h"
#include "util/log.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <arpa/inet.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SERVE_USAGE                                                                                            \
    "usage: vigil serve [--listen ADDR:PORT] [--db FILE] [--auth munge|token|none] [--secret-file F]\n"       \
    "                   [--token-file F --allow-shared-token] [--read-token-file F] [--munge-socket S]\n"    \
    "                   [--tls-cert F --tls-key F] [--window SECONDS] [--port-file F]\n"                      \
    "                   [--policy FILE] " VG_OPTS_ORCH_USAGE " [--dry-run]\n"                           \
    "                   [--max-connections N] [--max-per-client N] [--heartbeat S] [--heartbeat-missed K]\n"    \
    "                   [--audit-stale S] [--catalog FILE] [--fault-policy FILE] [--store-alarm-mb N]\n"      \
    "                   [--new-store] [--advertise URL]\n"                                                    \
    VG_OPTS_ORCH_HELP                                                                                          \
    "Agents beat every S seconds (default 1; 0: no heartbeat monitor); a node silent for K beats\n"         \
    "(default 2) whose node daemon does not answer is isolated like a failed GPU.  GET /v1/audit calls\n"  \
    "a node's audit report stale after --audit-stale S seconds (default 172800: twice the agents' daily\n" \
    "report) and lists the nodes the scheduler lists that never sent one.  Each event's action is the\n"   \
    "controller's own: the fault catalog (--catalog, default the bundled one) with the site policy\n"    \
    "(--fault-policy, default /etc/vigil/policy.tsv when present), whatever the agent said.  Above\n"   \
    "--store-alarm-mb N (default 4096; 0: none) the store raises an ALERT and node reports are refused.\n"     \
    "--db FILE (or sqlite:FILE): one controller per store (a lock beside it).  A corrupt store is refused;\n" \
    "--new-store moves it aside and starts a new one.  --db postgresql://… (or a libpq conninfo): several\n" \
    "controllers share it; the elected one acts, the others take events and serve reads, and one takes\n"  \
    "over within seconds when the leader stops renewing its lease.  --advertise URL: this controller's URL\n" \
    "as the others name it (default: the one it listens on).  A leader that lost its lease exits 3.\n"      \
    "Token auth: --secret-file holds the cluster secret each node's token is derived from (`vigil\n"   \
    "token`); the old shared --token-file is taken only with --allow-shared-token (it proves no node).\n"\
    "Only nodes the scheduler lists are heard from, each only for itself.  --tls-cert/--tls-key (PEM):\n"\
    "HTTPS only; clients verify it with --ca.\n"

#define SERVE_STOP_BOUND_S 6 /* from the stop signal to the exit, at most */
#define VG_EXIT_LOST_LEASE 3 /* a leader that lost its lease */

/* What the HTTP side, the executor and the heartbeat monitor share. */
struct serve {
    struct vg_executor *exec;
    struct vg_http *http;
    struct vg_ingest *ingest;
    struct vg_heartbeats *hb;
    struct vg_store *reader;
    struct vg_fleetview *view;
    struct vg_nodeset *nodes;   /* the nodes the scheduler lists */
    struct vg_nodereports *reports;
    struct vg_storeguard *guard;
    struct vg_domains *domains;   /* the NVLink domains the nodes report with their beats */
    /* what acting takes (started at once on SQLite; on PostgreSQL when this
     * controller is elected) */
    struct vg_store *store;       /* the executor's connection */
    const struct vg_policy *policy;
    struct vg_orch *orch;
    const char *orchestrator;
    struct vg_orch_conf oc;
    struct vg_heartbeat_opts hbo;
    struct vg_orch *hb_orch;
    bool act;
    struct vg_election *election; /* several controllers on one PostgreSQL store; NULL: one */
    bool lost;                    /* it lost the lease: the process ends (status 3) to rejoin as a follower */
};

/* Open incidents by their state (store.h: every state but closed), from the
 * read connection. */
static void incident_states(struct vg_store *reader, struct sbuf *out)
{
    size_t count[VG_INC_COUNT] = { 0 };
    json_t *open = vg_store_open_states(reader);
    size_t i;
    json_t *inc;
    json_array_foreach(open, i, inc) {
        int st = vg_inc_state_parse(vg_json_str(inc, "state", ""));
        if (st >= 0) count[st]++;
    }
    json_decref(open);
    sbuf_puts(out, "# HELP vigil_open_incidents Open incidents by state.\n"
                   "# TYPE vigil_open_incidents gauge\n");
    for (int k = 0; k < VG_INC_CLOSED; k++)
        sbuf_printf(out, "vigil_open_incidents{state=\"%s\"} %zu\n", vg_inc_state_name((enum vg_inc_state)k), count[k]);
}

/* The controller's own event for a node the heartbeat monitor confirmed down:
 * the same intake as an agent's (which gives it its verdict from the
 * catalog). */
static void node_silent(void *ctx, const char *node, const char *jobs, const char *why)
{
    struct serve *s = ctx;
    struct vg_event e;
    vg_event_init(&e);
    vg_strlcpy(e.node, node, sizeof e.node);
    vg_strlcpy(e.jobs, jobs, sizeof e.jobs);   /* as its last heartbeat listed them */
    vg_strlcpy(e.source, "probe", sizeof e.source);
    vg_strlcpy(e.kind, "node-silent", sizeof e.kind);
    e.time_ms = e.seen_ms = e.first_ms = e.last_ms = vg_now_ms();
    vg_strlcpy(e.raw, why, sizeof e.raw);
    char err[256];
    if (vg_intake_event(s->ingest, &e, err, sizeof err)) vg_err("heartbeat: %s: %s", node, err);
}

/* The store's directory: every missing one down to it created (0700), as
 * `mkdir -p`; otherwise one line naming it and the flag.  0 or VG_EXIT_INPUT. */
static int state_dir(const char *db)
{
    char dir[1024];
    vg_strlcpy(dir, db, sizeof dir);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir) return 0;
    *slash = 0;
    struct stat st;
    if (!stat(dir, &st)) return S_ISDIR(st.st_mode) ? 0 : vg_input_error("serve: --db %s: %s is not a directory", db, dir);
    /* each directory of the path in turn; those already there are left as they are */
    for (char *p = dir + 1;; p++) {
        if (*p && *p != '/') continue;
        char c = *p;
        *p = 0;
        int rc = mkdir(dir, 0700);
        if (rc && errno != EEXIST)   /* dir ends at the one that cannot be made */
            return vg_input_error("serve: --db %s: cannot create %s (%s): create it, or give --db a file in a writable "
                                  "directory", db, dir, strerror(errno));
        if (!rc) vg_info("serve: created %s (0700) for the incident store", dir);
        if (!(*p = c)) return 0;
    }
}

/* The store holds what every node reported: readable by its owner only.  A
 * new one is created 0600 (SQLite gives its WAL and shared-memory files the
 * same mode); one readable by others is made so, and said. */
static int private_store(const char *db)
{
    int fd = open(db, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd >= 0) return close(fd), 0;
    if (errno != EEXIST) return vg_input_error("serve: --db %s: %s", db, strerror(errno));
    static const char *const suffix[] = { "", "-wal", "-shm" };
    for (size_t i = 0; i < sizeof suffix / sizeof *suffix; i++) {
        char path[4200];
        struct stat st;
        snprintf(path, sizeof path, "%s%s", db, suffix[i]);
        if (stat(path, &st) || !(st.st_mode & 077)) continue;
        if (chmod(path, 0600))
            return vg_input_error("serve: --db %s: %s is readable by others and cannot be made 0600: %s", db, path,
                                  strerror(errno));
        vg_warn("serve: %s was readable by others (mode %03o): made 0600, as the store holds every node's reports",
                path, (unsigned)(st.st_mode & 0777));
    }
    return 0;
}

static int on_beat(void *ctx, const char *node, const char *jobs, const char *domain, char *err, size_t errlen)
{
    struct serve *s = ctx;
    struct vg_heartbeats *hb = __atomic_load_n(&s->hb, __ATOMIC_ACQUIRE);
    if (!hb && s->election) {
        char role[16], url[256];
        int64_t term;
        vg_election_role(s->election, role, sizeof role, &term, url, sizeof url);
        snprintf(err, errlen, "this controller is a follower: beats go to the leader (%s)", url[0] ? url : "not elected yet");
        return 503;
    }
    if (!hb) {
        snprintf(err, errlen, "starting: the heartbeat monitor is not running yet; retry");
        return 503;
    }
    int code = vg_heartbeat_beat(hb, node, jobs, err, errlen);
    if (!code && domain && vg_domains_learn(s->domains, node, domain))   /* a node the scheduler lists */
        vg_info("serve: %s is in NVLink domain %s (its GPUs' fabric)", node, domain);
    return code;
}

static void on_new_incident(void *ctx, int64_t incident, const struct vg_event *e)
{
    struct serve *s = ctx;
    struct vg_executor *x = __atomic_load_n(&s->exec, __ATOMIC_ACQUIRE);
    if (x) vg_executor_submit(x, incident, e);   /* a follower: the leader takes it up from the store */
}

static void executor_metrics(void *ctx, struct sbuf *out)
{
    struct serve *s = ctx;
    struct vg_executor *x = __atomic_load_n(&s->exec, __ATOMIC_ACQUIRE);
    if (x) vg_executor_metrics(x, out);
    if (s->election) {
        char role[16], url[256];
        int64_t term;
        vg_election_role(s->election, role, sizeof role, &term, url, sizeof url);
        sbuf_printf(out, "# HELP vigil_leader 1 while this controller is the leader of those sharing its store.\n"
                         "# TYPE vigil_leader gauge\nvigil_leader %d\n"
                         "# HELP vigil_leader_term The controllers' current term as this one last saw it.\n"
                         "# TYPE vigil_leader_term gauge\nvigil_leader_term %lld\n",
                    !strcmp(role, "leader"), (long long)term);
    }
    vg_heartbeats_metrics(__atomic_load_n(&s->hb, __ATOMIC_ACQUIRE), out);
    if (s->nodes) vg_nodeset_metrics(s->nodes, out);
    vg_nodereports_metrics(s->reports, out);
    if (s->reader) incident_states(s->reader, out);
    vg_storeguard_metrics(s->guard, out);
    if (s->view) vg_fleetview_metrics(s->view, out);
}

static bool may_act(void *ctx, int64_t *term)
{
    return vg_election_leading(ctx, term);
}

/* The executor and the heartbeat monitor: this controller acts from now on. */
static void start_acting(struct serve *s)
{
    struct vg_exec_gate gate = { .may_act = may_act, .ctx = s->election };
    int64_t term = 0;
    if (s->election) {
        vg_election_leading(s->election, &term);
        vg_store_fence(s->store, vg_election_holder(s->election), term);
    }
    struct vg_executor *x = vg_executor_start(s->store, s->policy, s->orch, s->act, s->election ? &gate : NULL);
    __atomic_store_n(&s->exec, x, __ATOMIC_RELEASE);
    vg_fleetview_set_exec(s->view, x);
    /* the monitor probes through an orchestrator of its own, from its thread;
     * elected, it watches every node (those that beat to the old leader too) */
    s->hbo.track_all = s->election != NULL;
    char err[256];
    if (s->http && s->hbo.interval_ms > 0 && !(s->hb_orch = vg_orch_open(s->orchestrator, &s->oc, err, sizeof err)))
        vg_err("serve: no heartbeat monitor: %s", err);
    if (s->hb_orch)
        __atomic_store_n(&s->hb, vg_heartbeats_start(&s->hbo, s->hb_orch, node_silent, s), __ATOMIC_RELEASE);
}

static void on_lead(void *ctx, int64_t term)
{
    (void)term;
    start_acting(ctx);
}

static void on_lost(void *ctx, int64_t term, const char *why)
{
    struct serve *s = ctx;
    (void)term;
    (void)why;
    __atomic_store_n(&s->lost, true, __ATOMIC_RELEASE);
    kill(getpid(), SIGTERM);   /* the main thread stops everything in order */
}

/* /healthz on a controller of several: its role, its term, the leader's URL. */
static void health(void *ctx, struct sbuf *out)
{
    struct serve *s = ctx;
    char role[16], url[256];
    int64_t term;
    vg_election_role(s->election, role, sizeof role, &term, url, sizeof url);
    sbuf_printf(out, "role %s\nterm %lld\nleader %s\n", role, (long long)term, url[0] ? url : "none");
}

/* The kinds the catalog knows, each once (the intake's vocabulary). */
static size_t catalog_kinds(const struct vg_catalog *cat, const char ***out)
{
    size_t n = 0, total = vg_catalog_count(cat);
    const char **kinds = vg_xcalloc(total ? total : 1, sizeof *kinds);
    for (size_t i = 0; i < total; i++) {
        const char *k = vg_catalog_at(cat, i)->kind;
        size_t j = 0;
        while (j < n && strcmp(kinds[j], k)) j++;
        if (j == n) kinds[n++] = k;
    }
    *out = kinds;
    return n;
}

/* http(s)://HOST:PORT for the address listened on: the host name when that
 * is every address (0.0.0.0, [::]). */
static void serve_url(const char *listen, bool tls, unsigned port, char *buf, size_t n)
{
    char host[256] = "";
    const char *colon = strrchr(listen, ':');
    if (colon && (size_t)(colon - listen) < sizeof host) memcpy(host, listen, (size_t)(colon - listen)), host[colon - listen] = 0;
    if (!host[0] || !strcmp(host, "0.0.0.0") || !strcmp(host, "[::]") || !strcmp(host, "*"))
        if (gethostname(host, sizeof host - 1)) strcpy(host, "localhost");
    snprintf(buf, n, "%s://%s:%u", tls ? "https" : "http", host, port);
}

/* Room for the connection limit: the soft descriptor limit up to the hard one. */
static unsigned raise_nofile(unsigned want)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl)) return want;
    if (rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
        getrlimit(RLIMIT_NOFILE, &rl);
    }
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < (rlim_t)want + 64)
        want = rl.rlim_cur > 128 ? (unsigned)(rl.rlim_cur - 64) : 64;
    return want;
}

/* Bounds the stop: SERVE_STOP_BOUND_S after the signal the process exits
 * (every acknowledged message is committed; queued incidents are in the store
 * and resume at the next start). */
static void *stop_watchdog(void *arg)
{
    (void)arg;
    struct timespec ts = { .tv_sec = SERVE_STOP_BOUND_S };
    while (nanosleep(&ts, &ts)) {}
    vg_err("serve: not stopped within %d s of the signal; exiting (queued incidents resume at the next start)",
           SERVE_STOP_BOUND_S);
    _exit(0);
    return NULL;
}

static int parse_count(const char *opt, const char *s, unsigned *out)
{
    long v;
    if (!vg_parse_long(s, &v) || v < 1 || v > 1000000) return vg_input_error("%s: '%s' is not a count from 1 to 1000000", opt, s);
    *out = (unsigned)v;
    return 0;
}

int cmd_serve(int argc, char **argv)
{
    const char *listen = "0.0.0.0:8470", *db = "/var/lib/vigil/incidents.db", *mode = "munge";
    const char *port_file = NULL, *policy_file = NULL, *tls_cert = NULL, *tls_key = NULL, *advertise = NULL;
    bool allow_shared = false;
    struct vg_shared_opts so = { 0 };   /* the orchestrator, the agents' credentials, the read token */
    bool act = true, new_store = false;
    long window = 60;
    struct vg_http_opts hopts = { 0 };
    struct vg_heartbeat_opts hbo = { .interval_ms = 1000, .missed = 2 };
    long audit_stale = VG_AUDIT_STALE_DEFAULT_S, alarm_mb = VG_STORE_ALARM_DEFAULT_MB;
    const char *catalog_file = NULL, *fault_policy = NULL;
    static const struct option own[] = {
        { "listen", required_argument, 0, 'l' }, { "db", required_argument, 0, 'd' },
        { "window", required_argument, 0, 'w' },
        { "port-file", required_argument, 0, 'p' }, { "policy", required_argument, 0, 'P' },
        { "dry-run", no_argument, 0, 'n' },
        { "max-connections", required_argument, 0, 'C' }, { "max-per-client", required_argument, 0, 'c' },
        { "heartbeat", required_argument, 0, 'B' }, { "heartbeat-missed", required_argument, 0, 'M' },
        { "audit-stale", required_argument, 0, 'A' }, { "catalog", required_argument, 0, 'K' },
        { "fault-policy", required_argument, 0, 'F' }, { "store-alarm-mb", required_argument, 0, 'Z' },
        { "new-store", no_argument, 0, 'N' }, { "advertise", required_argument, 0, 'U' },
        { "allow-shared-token", no_argument, 0, 'T' },
        { "tls-cert", required_argument, 0, 'x' }, { "tls-key", required_argument, 0, 'y' },
        { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 },
    };
    enum { BLOCKS = VG_OPTS_ORCH | VG_OPTS_CREDS | VG_OPTS_SECRET | VG_OPTS_READ_TOKEN };
    struct vg_opts_buf ob;
    const struct option *opts = vg_opts_table(own, BLOCKS, &ob);
    int o;
    optind = 1;
    while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (o) {
        case 'l': listen = optarg; break;
        case 'd': db = vg_startswith(optarg, "sqlite:") ? optarg + 7 : optarg; break;
        case 'T': allow_shared = true; break;
        case 'x': tls_cert = optarg; break;
        case 'y': tls_key = optarg; break;
        case 'p': port_file = optarg; break;
        case 'P': policy_file = optarg; break;
        case 'n': act = false; break;
        case 'N': new_store = true; break;
        case 'U': advertise = optarg; break;
        case 'C':
            if (parse_count("--max-connections", optarg, &hopts.max_connections)) return VG_EXIT_INPUT;
            break;
        case 'c':
            if (parse_count("--max-per-client", optarg, &hopts.max_per_client)) return VG_EXIT_INPUT;
            break;
        case 'B': {
            char *end;
            double s = strtod(optarg, &end);
            if (end == optarg || *end || s < 0 || s > 3600)
                return vg_input_error("--heartbeat: '%s' is not seconds (0 turns the monitor off)", optarg);
            hbo.interval_ms = (int)(s * 1000);
            break;
        }
        case 'M': {
            long k;
            if (!vg_parse_long(optarg, &k) || k < 1 || k > 100)
                return vg_input_error("--heartbeat-missed: '%s' is not a count 1..100", optarg);
            hbo.missed = (int)k;
            break;
        }
        case 'A':
            if (!vg_parse_long(optarg, &audit_stale) || audit_stale < 1 || audit_stale > 365L * 86400)
                return vg_input_error("--audit-stale: '%s' is not seconds from 1 to 31536000", optarg);
            break;
        case 'K': catalog_file = optarg; break;
        case 'F': fault_policy = optarg; break;
        case 'Z':
            if (!vg_parse_long(optarg, &alarm_mb) || alarm_mb < 0 || alarm_mb > 1L << 30)
                return vg_input_error("--store-alarm-mb: '%s' is not a size in MiB (0: no alarm)", optarg);
            break;
        case 'w':
            if (!vg_parse_long(optarg, &window) || window < 0) return vg_input_error("--window: '%s' is not a number of seconds", optarg);
            break;
        case 'h': fputs(SERVE_USAGE, stdout); return 0;
        default:
            if (vg_opts_take(o, optarg, &so)) break;
            fputs(SERVE_USAGE, stderr);
            return VG_EXIT_INPUT;
        }
    }
    if (optind < argc) return vg_input_error("serve: unexpected argument '%s'", argv[optind]);
    if (vg_opts_check("serve", BLOCKS, &so)) return VG_EXIT_INPUT;
    const char *orchestrator = so.orchestrator, *read_token_file = so.read_token_file;
    if (so.auth) mode = so.auth;

    char err[512], read_token[256];
    if (read_token_file && vg_auth_read_token(read_token_file, read_token, sizeof read_token, err, sizeof err))
        return vg_input_error("--read-token-file: %s", err);
    hopts.read_token = read_token_file ? read_token : NULL;
    hopts.listen = listen;
    struct vg_policy policy;
    vg_policy_defaults(&policy);
    if (policy_file && vg_policy_load(&policy, policy_file, err, sizeof err)) {
        vg_policy_free(&policy);
        return vg_input_error("%s", err);
    }
    struct vg_auth auth;
    char *tls_cert_pem, *tls_key_pem;
    struct vg_serve_creds creds = { .listen = listen, .mode = mode, .secret_file = so.secret_file,
                                    .token_file = so.token_file, .munge_socket = so.munge_socket, .tls_cert = tls_cert,
                                    .tls_key = tls_key, .allow_shared = allow_shared };
    if (vg_serve_creds(&creds, &auth, &tls_cert_pem, &tls_key_pem)) {
        vg_policy_free(&policy);
        return VG_EXIT_INPUT;
    }
    hopts.tls_cert = tls_cert_pem;
    hopts.tls_key = tls_key_pem;
    /* the one source of verdicts, with the site policy, as the agents load it */
    struct vg_catalog *cat = vg_catalog_open(NULL, catalog_file, fault_policy, err, sizeof err);
    if (!cat) {
        vg_auth_free(&auth);
        free(tls_cert_pem);
        free(tls_key_pem);
        vg_policy_free(&policy);
        return vg_input_error("%s", err);
    }
    struct vg_orch_conf oc = vg_opts_orch_conf(&so, 0);
    struct vg_orch *orch = vg_orch_open(orchestrator, &oc, err, sizeof err);
    if (!orch) {
        vg_catalog_free(cat);
        vg_auth_free(&auth);
        free(tls_cert_pem);
        free(tls_key_pem);
        vg_policy_free(&policy);
        return vg_input_error("serve: %s", err);
    }
    const char **kinds;
    size_t nkinds = catalog_kinds(cat, &kinds);
    bool file_store = !strcmp(vg_store_engine(db), "sqlite");
    if (file_store && (state_dir(db) || private_store(db))) {
        free(kinds);
        vg_orch_close(orch);
        vg_catalog_free(cat);
        vg_auth_free(&auth);
        free(tls_cert_pem);
        free(tls_key_pem);
        vg_policy_free(&policy);
        return VG_EXIT_INPUT;
    }
    /* One writer: the store's lock first (nothing is read or moved aside under
     * another controller), then a corrupt store refused or moved aside. */
    struct vg_storeguard *guard = vg_storeguard_lock(db, err, sizeof err);
    if (guard && vg_storeguard_verify(guard, new_store, err, sizeof err)) {
        vg_storeguard_close(guard);
        guard = NULL;
    }
    /* Four connections: the executor's, the intake's (group commit), the
     * nodes' audit reports' and the reads'. */
    struct vg_store *store = NULL, *wstore = NULL, *astore = NULL, *rstore = NULL;
    if (!guard || vg_store_open(db, &store, err, sizeof err) || vg_store_open(db, &wstore, err, sizeof err) ||
        vg_store_open(db, &astore, err, sizeof err) || vg_store_open_reader(db, &rstore, err, sizeof err)) {
        vg_store_close(store);
        vg_store_close(wstore);
        vg_store_close(astore);
        vg_storeguard_close(guard);
        free(kinds);
        vg_orch_close(orch);
        vg_catalog_free(cat);
        vg_auth_free(&auth);
        free(tls_cert_pem);
        free(tls_key_pem);
        vg_policy_free(&policy);
        return vg_input_error("serve: %s", err);
    }
    /* The stop signals blocked before any thread starts (the store's watch is
     * the first; each thread inherits the mask), then waited for. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    vg_storeguard_watch(guard, (struct vg_store *const[]){ store, wstore, astore, rstore }, 4);
    hopts.reader = rstore;
    struct serve sv = { .reader = rstore, .guard = guard, .domains = vg_domains_new() };
    policy.learned = sv.domains;
    /* the nodes the scheduler lists: the only ones the intake, the heartbeat
     * monitor, the node reports and the fleet audit believe, read by a thread
     * of its own through a handle of its own */
    struct vg_orch_conf noc = oc;
    noc.timeout_ms = 5000;
    struct vg_orch *ns_orch = vg_orch_open(orchestrator, &noc, err, sizeof err);
    sv.nodes = ns_orch ? vg_nodeset_start(ns_orch, 0, 0) : NULL;
    if (sv.nodes && !vg_nodeset_wait(sv.nodes, 3000)) {
        vg_nodeset_error(sv.nodes, err, sizeof err);
        vg_warn("serve: the scheduler's node list is not read yet (%s): nodes are answered 503 until it is", err);
    }
    hopts.nodes = sv.nodes;
    hbo.nodes = sv.nodes;
    sv.reports = vg_nodereports_new(&(struct vg_nodereports_opts){
        .store = astore, .nodes = sv.nodes, .alarm_bytes = (int64_t)alarm_mb << 20 });
    hopts.reports = sv.reports;
    struct vg_serve_fleet sf = { .stale_after_ms = audit_stale * 1000, .nodes = sv.nodes };
    hopts.fleet = vg_serve_fleet;
    hopts.fleet_ctx = &sf;
    hopts.max_connections = raise_nofile(hopts.max_connections ? hopts.max_connections : 1024);

    /* the dashboard reads the node list through a handle of its own, with a
     * short timeout, so it never waits behind (or delays) an action */
    struct vg_orch_conf voc = oc;
    voc.timeout_ms = 2000;
    struct vg_orch *view_orch = vg_orch_open(orchestrator, &voc, err, sizeof err);
    if (!view_orch) vg_warn("serve: the dashboard will not read the scheduler: %s", err);
    sv.view = vg_fleetview_new(&(struct vg_fleetview_opts){
        .reader = rstore, .policy = &policy, .orch = view_orch });
    hopts.view = sv.view;
    struct vg_ingest ingest = { .store = wstore, .guard = guard, .window_ms = window * 1000, .cat = cat, .kinds = kinds, .nkinds = nkinds,
                                .on_new_incident = on_new_incident, .metrics = executor_metrics, .ctx = &sv };
    if (hbo.interval_ms > 0) hopts.on_beat = on_beat, hopts.beat_ctx = &sv;
    if (!file_store) hopts.health = health, hopts.health_ctx = &sv;
    ingest.committer = vg_committer_start(&ingest);   /* agents' messages and the controller's own events */
    sv.ingest = &ingest;
    struct vg_http *http = sv.nodes && ingest.committer ? vg_http_start(&hopts, &auth, &ingest, err, sizeof err) : NULL;
    sv.http = http;
    sv.store = store, sv.policy = &policy, sv.orch = orch, sv.orchestrator = orchestrator, sv.oc = oc, sv.hbo = hbo;
    sv.act = act;
    char url[300] = "";
    if (http) serve_url(listen, tls_cert_pem != NULL, vg_http_port(http), url, sizeof url);
    if (http && !file_store) {
        /* one of several controllers: it acts once elected */
        sv.election = vg_election_start(&(struct vg_election_opts){ .target = db, .url = advertise ? advertise : url,
                                                                     .on_lead = on_lead, .on_lost = on_lost, .ctx = &sv },
                                        err, sizeof err);
        if (!sv.election) {
            vg_http_stop(http);
            http = sv.http = NULL;
        }
    } else if (http) {
        start_acting(&sv);
    }
    int rc = 0;
    if (!http) {
        rc = vg_input_error("%s", err);
    } else {
        unsigned port = vg_http_port(http);
        if (port_file) {
            FILE *f = fopen(port_file, "w");
            if (f) {
                fprintf(f, "%u\n", port);
                fclose(f);
            } else {
                vg_err("serve: cannot write %s", port_file);
            }
        }
        vg_notice("serve: listening on %s, store %s, auth %s, reads %s, %s %s", url,
                  file_store ? db : "on PostgreSQL", mode,
                  read_token_file ? "with the read token" : auth.mode == VG_AUTH_NONE ? "open (loopback)" : "refused",
                  act ? "acting on" : "dry run, reading", orch->ops->name);
        if (read_token_file) vg_notice("serve: dashboard %s/ (open it once as %s/?token=<the read token in %s>)", url, url,
                                       read_token_file);
        int sig;
        sigwait(&set, &sig);
        vg_info("serve: stopping on signal %d", sig);
        pthread_t wd;
        if (pthread_create(&wd, NULL, stop_watchdog, NULL) == 0) pthread_detach(wd);
        vg_election_stop(sv.election);   /* no more elections: nothing starts acting now */
        vg_heartbeats_stop(sv.hb);   /* before the intake stops: it submits */
        sv.hb = NULL;
        vg_http_stop(http);
    }
    vg_committer_stop(ingest.committer);   /* what is queued is stored first */
    vg_orch_close(sv.hb_orch);
    vg_nodeset_stop(sv.nodes);
    vg_executor_stop(sv.exec);
    vg_election_free(sv.election);   /* a leader resigns: a follower takes over at its next look */
    if (__atomic_load_n(&sv.lost, __ATOMIC_ACQUIRE)) {
        vg_err("serve: exiting after losing the lease; started again, it rejoins as a follower");
        rc = VG_EXIT_LOST_LEASE;
    }
    vg_fleetview_free(sv.view);
    vg_nodereports_free(sv.reports);
    vg_orch_close(view_orch);
    vg_orch_close(orch);
    vg_policy_free(&policy);
    vg_domains_free(sv.domains);
    vg_store_close(rstore);
    vg_store_close(astore);
    vg_store_close(wstore);
    vg_store_close(store);
    vg_storeguard_close(guard);   /* the lock last: the store is closed */
    free(kinds);
    vg_catalog_free(cat);
    vg_auth_free(&auth);
    free(tls_cert_pem);
    free(tls_key_pem);
    return rc;
}
