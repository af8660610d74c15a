/* serve.c — `vigil serve`: the cluster controller's command.  Its options
 * (SERVE_USAGE), the agents' credentials and the read token read, the
 * controller started (controller.h: the store, the intake, HTTP, the
 * executor, the heartbeat monitor, the election), its port file and start
 * lines; then it waits for SIGTERM/SIGINT, or for the lease to be lost, and
 * stops it in order within SERVE_STOP_BOUND_S (queued incidents are in the
 * store and resume at restart).  Exit 2 on bad input, 3 when it lost its
 * lease. */
#include "cmd/cmd.h"
#include "cmd/opts.h"
#include "cmd/serve_auth.h"
#include "controller/controller.h"
#include "cmd/serve_fleet.h"
#include "controller/nodereport.h"
#include "controller/store.h"
#include "wire/auth.h"
#include "util/log.h"
#include "util/strutil.h"
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static bool lost;   /* the lease was lost: the exit status is 3, the stop watchdog's too */

/* The lease lost (the election's thread): the main thread stops everything
 * in order, as on a stop signal. */
static void lost_lease(void *ctx)
{
    (void)ctx;
    __atomic_store_n(&lost, true, __ATOMIC_RELEASE);
    kill(getpid(), SIGTERM);
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
    _exit(__atomic_load_n(&lost, __ATOMIC_ACQUIRE) ? VG_EXIT_LOST_LEASE : 0);
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
    const char *mode = "munge", *port_file = NULL, *tls_cert = NULL, *tls_key = NULL;
    bool allow_shared = false;
    struct vg_shared_opts so = { 0 };   /* the orchestrator, the agents' credentials, the read token */
    long audit_stale_s = VG_AUDIT_STALE_DEFAULT_S;
    struct vg_controller_opts co = {
        .listen = "0.0.0.0:8470", .db = "/var/lib/vigil/incidents.db", .act = true, .window_s = 60,
        .heartbeat = { .interval_ms = 1000, .missed = 2 }, .alarm_mb = VG_STORE_ALARM_DEFAULT_MB,
        .fleet = vg_serve_fleet, .fleet_ctx = &audit_stale_s };
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
        case 'l': co.listen = optarg; break;
        case 'd': co.db = vg_startswith(optarg, "sqlite:") ? optarg + 7 : optarg; break;
        case 'T': allow_shared = true; break;
        case 'x': tls_cert = optarg; break;
        case 'y': tls_key = optarg; break;
        case 'p': port_file = optarg; break;
        case 'P': co.policy_file = optarg; break;
        case 'n': co.act = false; break;
        case 'N': co.new_store = true; break;
        case 'U': co.advertise = optarg; break;
        case 'C':
            if (parse_count("--max-connections", optarg, &co.max_connections)) return VG_EXIT_INPUT;
            break;
        case 'c':
            if (parse_count("--max-per-client", optarg, &co.max_per_client)) return VG_EXIT_INPUT;
            break;
        case 'B': {
            char *end;
            double s = strtod(optarg, &end);
            if (end == optarg || *end || s < 0 || s > 3600)
                return vg_input_error("--heartbeat: '%s' is not seconds (0 turns the monitor off)", optarg);
            co.heartbeat.interval_ms = (int)(s * 1000);
            break;
        }
        case 'M': {
            long k;
            if (!vg_parse_long(optarg, &k) || k < 1 || k > 100)
                return vg_input_error("--heartbeat-missed: '%s' is not a count 1..100", optarg);
            co.heartbeat.missed = (int)k;
            break;
        }
        case 'A':
            if (!vg_parse_long(optarg, &audit_stale_s) || audit_stale_s < 1 || audit_stale_s > 365L * 86400)
                return vg_input_error("--audit-stale: '%s' is not seconds from 1 to 31536000", optarg);
            break;
        case 'K': co.catalog_file = optarg; break;
        case 'F': co.fault_policy = optarg; break;
        case 'Z':
            if (!vg_parse_long(optarg, &co.alarm_mb) || co.alarm_mb < 0 || co.alarm_mb > 1L << 30)
                return vg_input_error("--store-alarm-mb: '%s' is not a size in MiB (0: no alarm)", optarg);
            break;
        case 'w':
            if (!vg_parse_long(optarg, &co.window_s) || co.window_s < 0) return vg_input_error("--window: '%s' is not a number of seconds", optarg);
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
    const char *read_token_file = so.read_token_file;
    if (so.auth) mode = so.auth;
    char err[512], read_token[256];
    if (read_token_file && vg_auth_read_token(read_token_file, read_token, sizeof read_token, err, sizeof err))
        return vg_input_error("--read-token-file: %s", err);
    struct vg_auth auth;
    char *tls_cert_pem, *tls_key_pem;
    struct vg_serve_creds creds = { .listen = co.listen, .mode = mode, .secret_file = so.secret_file,
                                    .token_file = so.token_file, .munge_socket = so.munge_socket, .tls_cert = tls_cert,
                                    .tls_key = tls_key, .allow_shared = allow_shared };
    if (vg_serve_creds(&creds, &auth, &tls_cert_pem, &tls_key_pem)) return VG_EXIT_INPUT;
    co.read_token = read_token_file ? read_token : NULL;
    co.auth = &auth, co.tls_cert = tls_cert_pem, co.tls_key = tls_key_pem;
    co.orchestrator = so.orchestrator, co.orch_conf = vg_opts_orch_conf(&so, 0);
    co.on_lost = lost_lease;
    /* The stop signals blocked before any thread starts (each inherits the
     * mask), then waited for. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    struct vg_controller *c = vg_controller_start(&co, err, sizeof err);
    int rc = 0;
    if (!c) {
        rc = vg_input_error("%s", err);
    } else {
        unsigned port = vg_controller_port(c);
        const char *url = vg_controller_url(c);
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
                  !strcmp(vg_store_engine(co.db), "sqlite") ? co.db : "on PostgreSQL", mode,
                  read_token_file ? "with the read token" : auth.mode == VG_AUTH_NONE ? "open (loopback)" : "refused",
                  co.act ? "acting on" : "dry run, reading", vg_controller_orchestrator(c));
        if (read_token_file) vg_notice("serve: dashboard %s/ (open it once as %s/?token=<the read token in %s>)", url, url,
                                       read_token_file);
        int sig;
        sigwait(&set, &sig);
        vg_info("serve: stopping on signal %d", sig);
        pthread_t wd;
        if (pthread_create(&wd, NULL, stop_watchdog, NULL) == 0) pthread_detach(wd);
        if (vg_controller_stop(c)) {
            vg_err("serve: exiting after losing the lease; started again, it rejoins as a follower");
            rc = VG_EXIT_LOST_LEASE;
        }
    }
    vg_auth_free(&auth);
    free(tls_cert_pem);
    free(tls_key_pem);
    return rc;
}
