/* serve.c — `vigil serve`: the cluster controller.  Receives agents' events
 * over HTTP (authenticated with MUNGE or a token), records incidents in SQLite
 * (WAL; an accepted incident survives kill -9) and serves them back.
 *   vigil serve [--listen ADDR:PORT] [--db FILE] [--auth munge|token|none]
 *               [--token-file F] [--munge-socket S] [--window SECONDS] [--port-file F]
 *               [--policy FILE] [--slurm-conf FILE] [--dry-run]
 * Each new incident goes to the executor, which applies the policy to Slurm. */
#include "cmd/cmd.h"
#include "wire/auth.h"
#include "controller/executor.h"
#include "controller/policy.h"
#include "controller/httpapi.h"
#include "controller/ingest.h"
#include "controller/store.h"
#include "util/log.h"
#include "util/strutil.h"
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SERVE_USAGE                                                                                     \
    "usage: vigil serve [--listen ADDR:PORT] [--db FILE] [--auth munge|token|none] [--token-file F]\n" \
    "                   [--munge-socket S] [--window SECONDS] [--port-file F]\n"                            \
    "                   [--policy FILE] [--orchestrator NAME] [--orch-config FILE] [--dry-run]\n"  \
    "NAME: the scheduler vigil acts on (slurm, the default, or k8s); FILE: its configuration\n"       \
    "(slurm.conf, --slurm-conf FILE is the same; a kubeconfig for k8s).\n"

static void on_new_incident(void *ctx, int64_t incident, const struct vg_event *e)
{
    vg_executor_submit(ctx, incident, e);
}

static void executor_metrics(void *ctx, struct sbuf *out) { vg_executor_metrics(ctx, out); }

int cmd_serve(int argc, char **argv)
{
    const char *listen = "0.0.0.0:8470", *db = "/var/lib/vigil/incidents.db", *mode = "munge";
    const char *token_file = NULL, *munge_socket = NULL, *port_file = NULL, *policy_file = NULL;
    const char *orchestrator = NULL, *orch_config = NULL;
    bool act = true;
    long window = 60;
    static const struct option opts[] = {
        { "listen", required_argument, 0, 'l' }, { "db", required_argument, 0, 'd' },
        { "auth", required_argument, 0, 'a' },   { "token-file", required_argument, 0, 't' },
        { "munge-socket", required_argument, 0, 'm' }, { "window", required_argument, 0, 'w' },
        { "port-file", required_argument, 0, 'p' }, { "policy", required_argument, 0, 'P' },
        { "slurm-conf", required_argument, 0, 'S' }, { "orch-config", required_argument, 0, 'S' },
        { "orchestrator", required_argument, 0, 'O' }, { "dry-run", no_argument, 0, 'n' },
        { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 },
    };
    int o;
    optind = 1;
    while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (o) {
        case 'l': listen = optarg; break;
        case 'd': db = optarg; break;
        case 'a': mode = optarg; break;
        case 't': token_file = optarg; break;
        case 'm': munge_socket = optarg; break;
        case 'p': port_file = optarg; break;
        case 'P': policy_file = optarg; break;
        case 'S': orch_config = optarg; break;
        case 'O': orchestrator = optarg; break;
        case 'n': act = false; break;
        case 'w':
            if (!vg_parse_long(optarg, &window) || window < 0) return vg_input_error("--window: '%s' is not a number of seconds", optarg);
            break;
        case 'h': fputs(SERVE_USAGE, stdout); return 0;
        default: fputs(SERVE_USAGE, stderr); return VG_EXIT_INPUT;
        }
    }
    if (optind < argc) return vg_input_error("serve: unexpected argument '%s'", argv[optind]);

    char err[512];
    struct vg_policy policy;
    vg_policy_defaults(&policy);
    if (policy_file && vg_policy_load(&policy, policy_file, err, sizeof err)) return vg_input_error("%s", err);
    struct vg_auth auth;
    if (vg_auth_init(&auth, mode, token_file, munge_socket, err, sizeof err)) {
        vg_policy_free(&policy);
        return vg_input_error("%s", err);
    }
    if (auth.mode == VG_AUTH_NONE) vg_warn("serve: --auth none: any client may post events");
    struct vg_orch_conf oc = { .config = orch_config };
    struct vg_orch *orch = vg_orch_open(orchestrator, &oc, err, sizeof err);
    if (!orch) {
        vg_auth_free(&auth);
        vg_policy_free(&policy);
        return vg_input_error("serve: %s", err);
    }
    struct vg_store *store;
    if (vg_store_open(db, &store, err, sizeof err)) {
        vg_orch_close(orch);
        vg_auth_free(&auth);
        vg_policy_free(&policy);
        return vg_input_error("%s", err);
    }

    /* Block the stop signals before the server's thread starts, then wait for one. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    struct vg_executor *exec = vg_executor_start(store, &policy, orch, act);
    struct vg_ingest ingest = { .store = store, .window_ms = window * 1000, .on_new_incident = on_new_incident,
                                .metrics = executor_metrics, .ctx = exec };
    struct vg_http *http = vg_http_start(listen, &auth, &ingest, err, sizeof err);
    if (!http) {
        vg_executor_stop(exec);
        vg_orch_close(orch);
        vg_policy_free(&policy);
        vg_store_close(store);
        vg_auth_free(&auth);
        return vg_input_error("%s", err);
    }
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
    vg_info("serve: listening on port %u, store %s, auth %s, %s %s", port, db, mode,
            act ? "acting on" : "dry run, reading", orch->ops->name);
    int sig;
    sigwait(&set, &sig);
    vg_info("serve: stopping on signal %d", sig);
    vg_http_stop(http);
    vg_executor_stop(exec);
    vg_orch_close(orch);
    vg_policy_free(&policy);
    vg_store_close(store);
    vg_auth_free(&auth);
    return 0;
}
