/* token.c — `vigil token`: each node's own token for `--auth token`,
 * derived from the cluster secret the controller keeps (wire/auth.h), so an
 * agent holds only the credential of the node it runs on.
 *   vigil token --secret-file F --node HOSTLIST [--out FILE] [--json]
 *   vigil token --new-secret FILE */
#include "cmd/cmd.h"
#include "cmd/opts.h"
#include "controller/ingest.h"
#include "util/hostlist.h"
#include "util/jsonutil.h"
#include "util/log.h"
#include "util/strutil.h"
#include "wire/auth.h"
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#define TOKEN_USAGE                                                                                      \
    "usage: vigil token --secret-file F --node HOSTLIST [--out FILE] [--json]\n"                        \
    "       vigil token --new-secret FILE\n"                                                              \
    "Derives each node's token from the cluster secret in F (HMAC-SHA256 of the node's name): the\n"   \
    "token the agent on that node gives with --token-file, while the controller keeps only F\n"        \
    "(vigil serve --auth token --secret-file F).  Printed one per line (NAME TOKEN; --json: an\n"     \
    "object), or written to FILE (mode 0600), in which %n is the node's name (needed for several).\n"  \
    "--new-secret writes a fresh random secret to FILE (mode 0600; an existing file is kept).\n"

#define MAX_NODES 100000

/* Writes text to path, mode 0600, replacing it (or, excl, only when new). */
static int write_private(const char *path, const char *text, bool excl)
{
    char tmp[1100];
    if (excl) {
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd < 0) return vg_input_error("token: %s: %s", path, strerror(errno));
        bool ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text) && fsync(fd) == 0;
        close(fd);
        return ok ? 0 : vg_input_error("token: %s: cannot write it", path);
    }
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return vg_input_error("token: %s: %s", tmp, strerror(errno));
    bool ok = fchmod(fd, 0600) == 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text) && fsync(fd) == 0;
    ok = close(fd) == 0 && ok && rename(tmp, path) == 0;
    if (!ok) unlink(tmp);
    return ok ? 0 : vg_input_error("token: %s: cannot write it (%s)", path, strerror(errno));
}

static int new_secret(const char *path)
{
    unsigned char r[32];
    char text[2 * sizeof r + 2];
    if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) return vg_input_error("token: no random bytes: %s", strerror(errno));
    for (size_t i = 0; i < sizeof r; i++) snprintf(text + 2 * i, 3, "%02x", r[i]);
    strcat(text, "\n");
    return write_private(path, text, true);
}

int cmd_token(int argc, char **argv)
{
    const char *nodes = NULL, *out = NULL, *fresh = NULL;
    bool json = false;
    static const struct option own[] = {
        { "node", required_argument, 0, 'n' },        { "out", required_argument, 0, 'o' },
        { "new-secret", required_argument, 0, 'N' },  { "json", no_argument, 0, 'j' },
        { "help", no_argument, 0, 'h' },              { 0, 0, 0, 0 },
    };
    struct vg_opts_buf ob;
    const struct option *opts = vg_opts_table(own, VG_OPTS_SECRET, &ob);
    struct vg_shared_opts so = { 0 };
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'n': nodes = optarg; break;
        case 'o': out = optarg; break;
        case 'N': fresh = optarg; break;
        case 'j': json = true; break;
        case 'h': fputs(TOKEN_USAGE, stdout); return 0;
        default:
            if (vg_opts_take(c, optarg, &so)) break;
            fputs(TOKEN_USAGE, stderr);
            return vg_input_error("token: unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    const char *secret_file = so.secret_file;
    if (optind < argc) return vg_input_error("token: unexpected argument '%s'", argv[optind]);
    if (fresh) {
        if (secret_file || nodes || out) return vg_input_error("token: --new-secret goes alone");
        return new_secret(fresh);
    }
    if (!secret_file || !nodes) {
        fputs(TOKEN_USAGE, stderr);
        return vg_input_error("token: --secret-file and --node are needed");
    }
    char secret[256], err[512];
    if (vg_auth_read_secret(secret_file, VG_AUTH_SECRET_MIN, secret, sizeof secret, err, sizeof err))
        return vg_input_error("token: --secret-file %s", err);
    char **names;
    int n = vg_hostlist_expand(nodes, &names, MAX_NODES);
    if (n <= 0) return vg_input_error("token: --node '%s': not a host list", nodes);
    int rc = 0;
    if (n > 1 && out && !strstr(out, "%n"))
        rc = vg_input_error("token: --out %s: several nodes need %%n in the file name", out);
    json_t *all = json_object();
    for (int i = 0; i < n && !rc; i++) {
        char tok[65], path[1024], line[80];
        if (!vg_ingest_node_ok(names[i])) {
            rc = vg_input_error("token: --node: '%s' is not a node name", names[i]);
            break;
        }
        if (vg_auth_node_token(secret, names[i], tok, err, sizeof err)) {
            rc = vg_input_error("token: %s", err);
            break;
        }
        if (out) {
            vg_expand_node(out, names[i], path, sizeof path);
            snprintf(line, sizeof line, "%s\n", tok);
            rc = write_private(path, line, false);
        } else if (json) {
            json_object_set_new(all, names[i], json_string(tok));
        } else {
            printf("%s %s\n", names[i], tok);
        }
    }
    if (!rc && json && !out) vg_json_print(stdout, json_incref(all), 0);
    json_decref(all);
    for (int i = 0; i < n; i++) free(names[i]);
    free(names);
    memset(secret, 0, sizeof secret);
    return rc;
}
