/* opts.c — the options several subcommands share: one table, one parser,
 * one check; see opts.h. */
#include "cmd/opts.h"
#include "util/log.h"
#include "util/rootfs.h"
#include "util/strutil.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* getopt codes of the shared options: above every command's own (chars and 256 + an enum). */
enum {
    O_ORCH = 0x1000, O_ORCH_CONFIG, O_INSECURE_HTTP, O_CONTROLLER, O_AUTH, O_TOKEN_FILE, O_MUNGE_SOCKET, O_CA,
    O_SECRET_FILE, O_READ_TOKEN_FILE,
};

static const struct {
    struct option opt;
    unsigned block;
} shared[] = {
    { { "orchestrator", required_argument, 0, O_ORCH }, VG_OPTS_ORCH },
    { { "orch-config", required_argument, 0, O_ORCH_CONFIG }, VG_OPTS_ORCH },
    { { "slurm-conf", required_argument, 0, O_ORCH_CONFIG }, VG_OPTS_ORCH },
    { { "kubeconfig", required_argument, 0, O_ORCH_CONFIG }, VG_OPTS_ORCH },
    { { "insecure-http", no_argument, 0, O_INSECURE_HTTP }, VG_OPTS_ORCH },
    { { "controller", required_argument, 0, O_CONTROLLER }, VG_OPTS_CONTROLLER },
    { { "auth", required_argument, 0, O_AUTH }, VG_OPTS_CREDS },
    { { "token-file", required_argument, 0, O_TOKEN_FILE }, VG_OPTS_CREDS },
    { { "munge-socket", required_argument, 0, O_MUNGE_SOCKET }, VG_OPTS_CREDS },
    { { "ca", required_argument, 0, O_CA }, VG_OPTS_CA },
    { { "secret-file", required_argument, 0, O_SECRET_FILE }, VG_OPTS_SECRET },
    { { "read-token-file", required_argument, 0, O_READ_TOKEN_FILE }, VG_OPTS_READ_TOKEN },
};
#define NSHARED (sizeof shared / sizeof shared[0])

/* Appends o to b at *k, leaving room for the zero entry; a command whose table outgrows the buffer
 * is a bug of its own, found by its first run. */
static void put(struct vg_opts_buf *b, size_t *k, const struct option *o)
{
    if (*k + 1 >= sizeof b->opt / sizeof b->opt[0]) {
        fprintf(stderr, "vigil: more options than VG_OPTS_MAX (%d)\n", VG_OPTS_MAX);
        abort();
    }
    b->opt[(*k)++] = *o;
}

const struct option *vg_opts_table(const struct option *own, unsigned blocks, struct vg_opts_buf *b)
{
    size_t k = 0;
    for (; own->name; own++) put(b, &k, own);
    for (size_t i = 0; i < NSHARED; i++)
        if (shared[i].block & blocks) put(b, &k, &shared[i].opt);
    memset(&b->opt[k], 0, sizeof b->opt[k]);
    return b->opt;
}

bool vg_opts_take(int c, const char *arg, struct vg_shared_opts *s)
{
    switch (c) {
    case O_ORCH: s->orchestrator = arg; return true;
    case O_ORCH_CONFIG: s->orch_config = arg; return true;
    case O_INSECURE_HTTP: s->insecure_http = true; return true;
    case O_CONTROLLER: s->controller = arg; return true;
    case O_AUTH: s->auth = arg; return true;
    case O_TOKEN_FILE: s->token_file = arg; return true;
    case O_MUNGE_SOCKET: s->munge_socket = arg; return true;
    case O_CA: s->ca_file = arg; return true;
    case O_SECRET_FILE: s->secret_file = arg; return true;
    case O_READ_TOKEN_FILE: s->read_token_file = arg; return true;
    default: return false;
    }
}

int vg_opts_check(const char *cmd, unsigned blocks, const struct vg_shared_opts *s)
{
    if ((blocks & VG_OPTS_ORCH) && !vg_orch_find(s->orchestrator))
        return vg_input_error("%s: --orchestrator '%s': expected one of %s", cmd, s->orchestrator, vg_orch_names());
    bool creds = s->auth || s->token_file || s->munge_socket || s->ca_file;
    if ((blocks & VG_OPTS_CONTROLLER) && (blocks & VG_OPTS_CREDS) && creds && !(s->controller && *s->controller))
        return vg_input_error("%s: --auth, --token-file, --munge-socket and --ca go with --controller URL", cmd);
    return 0;
}

int vg_opts_read_token(const char *cmd, const struct vg_shared_opts *s, char *tok, size_t n)
{
    const char *env = getenv("VIGIL_READ_TOKEN");
    if (n) *tok = 0;
    if (s->read_token_file && vg_read_line(NULL, s->read_token_file, tok, n))
        return vg_input_error("%s: --read-token-file %s: cannot read it", cmd, s->read_token_file);
    if (!s->read_token_file && env) vg_strlcpy(tok, env, n);
    return 0;
}

struct vg_orch_conf vg_opts_orch_conf(const struct vg_shared_opts *s, int timeout_ms)
{
    return (struct vg_orch_conf){ .config = s->orch_config, .timeout_ms = timeout_ms,
                                  .insecure_http = s->insecure_http };
}
