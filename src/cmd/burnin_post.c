/* burnin_post.c — what a pass run elsewhere keeps of `vigil burnin`'s
 * options (the per-node runs of a lab pass, the scheduled jobs), and the
 * results sent to the controller (`--controller URL`: POST /v1/burnin,
 * authenticated like an agent's message), where they are kept as each
 * node's burn-in history. */
#include "cmd/cmd.h"
#include "cmd/burnin_opts.h"
#include "util/log.h"
#include "wire/client.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POST_TIMEOUT_MS 10000

int vg_burnin_forward(const struct vg_burnin_opts *o, const char **argv, int a, char toolargs[][1200])
{
    argv[a++] = "--suite", argv[a++] = vg_bi_suite_name(o->suite), argv[a++] = "--json";
    if (o->thresholds) argv[a++] = "--thresholds", argv[a++] = o->thresholds;
    if (o->only) argv[a++] = "--test", argv[a++] = o->only;
    for (size_t i = 0; i < o->ntools; i++) {
        snprintf(toolargs[i], sizeof toolargs[i], "%s=%s", o->tools[i].name, o->tools[i].path);
        argv[a++] = "--tool", argv[a++] = toolargs[i];
    }
    return a;
}

int vg_burnin_forward_controller(const struct vg_burnin_opts *o, const char **argv, int a)
{
    if (!o->controller) return a;
    argv[a++] = "--controller", argv[a++] = o->controller;
    if (o->auth) argv[a++] = "--auth", argv[a++] = o->auth;
    if (o->token_file) argv[a++] = "--token-file", argv[a++] = o->token_file;
    if (o->munge_socket) argv[a++] = "--munge-socket", argv[a++] = o->munge_socket;
    return a;
}

int vg_burnin_post(const struct vg_burnin_opts *o, const json_t *doc)
{
    struct vg_auth auth;
    char err[512], url[1100];
    if (vg_auth_init(&auth, o->auth ? o->auth : "munge", o->token_file, o->munge_socket, err, sizeof err))
        return vg_err("burnin: --controller: %s", err), -1;
    size_t len = strlen(o->controller);
    snprintf(url, sizeof url, "%.*s/v1/burnin", (int)(len && o->controller[len - 1] == '/' ? len - 1 : len),
             o->controller);
    char *body = json_dumps(doc, JSON_COMPACT), *resp = NULL;
    long status = 0;
    int rc = vg_client_post(url, &auth, body, POST_TIMEOUT_MS, &status, &resp, err, sizeof err);
    if (rc) vg_err("burnin: results not recorded by %s: %s", url, err);
    else if (status != 200) vg_err("burnin: results not recorded by %s: HTTP %ld %s", url, status, resp ? resp : "");
    free(body);
    free(resp);
    vg_auth_free(&auth);
    return rc || status != 200 ? -1 : 0;
}
