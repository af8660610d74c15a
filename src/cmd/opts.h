/* opts.h — the options several subcommands share, defined, parsed, checked
 * and described in one place (opts.c): which scheduler and how to reach it,
 * and how a command reaches the controller (or, for `vigil serve`, how it
 * checks who calls it).  A command puts the blocks it takes after its own
 * options in its getopt_long table (vg_opts_table), hands every option its
 * own switch does not know to vg_opts_take, checks them with vg_opts_check,
 * and puts the usage fragments below in its usage text. */
#ifndef VG_CMD_OPTS_H
#define VG_CMD_OPTS_H
#include "orch/orch.h"
#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>

enum vg_opt_block {
    VG_OPTS_ORCH = 1u << 0,       /* --orchestrator NAME, --orch-config FILE (--slurm-conf, --kubeconfig: the
                                   * same), --insecure-http */
    VG_OPTS_CONTROLLER = 1u << 1, /* --controller URL */
    VG_OPTS_CREDS = 1u << 2,      /* --auth munge|token|none, --token-file F, --munge-socket S */
    VG_OPTS_CA = 1u << 3,         /* --ca F: the CA an https:// controller is verified against */
    VG_OPTS_SECRET = 1u << 4,     /* --secret-file F: the cluster secret per-node tokens derive from */
    VG_OPTS_READ_TOKEN = 1u << 5, /* --read-token-file F: the token that reads the controller's API */
};
/* A node's side towards the controller: where it is and how to prove the node. */
#define VG_OPTS_CLIENT (VG_OPTS_CONTROLLER | VG_OPTS_CREDS | VG_OPTS_CA)
/* A reader of the controller's API (reports, the fleet audit). */
#define VG_OPTS_READER (VG_OPTS_CONTROLLER | VG_OPTS_READ_TOKEN | VG_OPTS_CA)

/* What the shared options said; NULL / false when not given. */
struct vg_shared_opts {
    const char *orchestrator, *orch_config;
    bool insecure_http;
    const char *controller, *auth, *token_file, *munge_socket, *ca_file, *secret_file, *read_token_file;
};

/* The usage fragments and the lines that explain them. */
#define VG_OPTS_ORCH_USAGE "[--orchestrator ORCH] [--orch-config CONF] [--insecure-http]"
#define VG_OPTS_ORCH_HELP                                                                                    \
    "ORCH: the scheduler: slurm (default; CONF: slurm.conf, --slurm-conf CONF is the same) or k8s (CONF: a\n" \
    "kubeconfig, --kubeconfig CONF is the same; default $KUBECONFIG, else in-cluster; an http:// API server\n" \
    "only with --insecure-http, and then without credentials, as kubectl).\n"
#define VG_OPTS_CLIENT_USAGE "[--controller URL [--auth munge|token|none] [--token-file F] [--munge-socket S] [--ca F]]"
#define VG_OPTS_CLIENT_HELP                                                                                  \
    "--controller: vigil serve's URL; --auth: how the node proves its name (default munge: --munge-socket S,\n" \
    "else munged's own; token: --token-file F, the node's own token from `vigil token --node NAME`); --ca F:\n" \
    "verify an https:// controller against the CA certificate(s) in F.\n"
#define VG_OPTS_READER_USAGE "[--controller URL] [--read-token-file F] [--ca F]"

/* Room for a command's own options and the shared ones. */
#define VG_OPTS_MAX 80
struct vg_opts_buf {
    struct option opt[VG_OPTS_MAX];
};
/* own (a table ending in a zero entry) followed by the options of blocks
 * and a zero entry, in b; returns b's table. */
const struct option *vg_opts_table(const struct option *own, unsigned blocks, struct vg_opts_buf *b);
/* Whether getopt's c is one of the shared options; its value goes to s. */
bool vg_opts_take(int c, const char *arg, struct vg_shared_opts *s);
/* After the options: the orchestrator is one of the table's and, where the
 * command takes both --controller and credentials, credentials go with a
 * controller.  cmd names the command in the one-line error.  0, or
 * VG_EXIT_INPUT once said. */
int vg_opts_check(const char *cmd, unsigned blocks, const struct vg_shared_opts *s);
/* The read token: the file --read-token-file names, else $VIGIL_READ_TOKEN,
 * else "".  0, or VG_EXIT_INPUT once said (a file that cannot be read). */
int vg_opts_read_token(const char *cmd, const struct vg_shared_opts *s, char *tok, size_t n);
/* How vg_orch_open is to reach the scheduler the options name. */
struct vg_orch_conf vg_opts_orch_conf(const struct vg_shared_opts *s, int timeout_ms);

#endif
