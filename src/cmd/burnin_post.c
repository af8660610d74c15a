/* burnin_post.c — what a pass run elsewhere keeps of `vigil burnin`'s
 * options (the per-node runs of a lab pass, the scheduled jobs), and the
 * results sent to the controller (`--controller URL`: POST /v1/burnin,
 * authenticated like an agent's message: each node's results posted as
 * that node), where they are kept as each node's burn-in history. */
#include "cmd/cmd.h"
#include "cmd/burnin_opts.h"
#include "util/log.h"
#include "util/strutil.h"
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
    if (o->vendors) argv[a++] = "--vendor", argv[a++] = o->vendors;
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
    if (o->ca_file) argv[a++] = "--ca", argv[a++] = o->ca_file;
    return a;
}

/* One node's results (the document with only that node), posted as that node. */
static int post_node(const struct vg_burnin_opts *o, const json_t *doc, const json_t *node, const char *url)
{
    const char *name = json_string_value(json_object_get(node, "node"));
    char err[512], tok[1024];
    if (o->token_file) vg_expand_node(o->token_file, name ? name : "", tok, sizeof tok);   /* a node's own: %n */
    struct vg_auth auth;
    struct vg_auth_conf ac = { .mode = o->auth ? o->auth : "munge", .node = name,
                               .token_file = o->token_file ? tok : NULL, .munge_socket = o->munge_socket };
    if (vg_auth_init(&auth, &ac, err, sizeof err)) return vg_err("burnin: --controller: %s", err), -1;
    json_t *one = json_deep_copy(doc);
    json_object_set_new(one, "nodes", json_pack("[O]", node));
    char *body = json_dumps(one, JSON_COMPACT), *resp = NULL;
    json_decref(one);
    long status = 0;
    int rc = vg_client_post(url, &auth, body, POST_TIMEOUT_MS, &status, &resp, err, sizeof err);
    if (rc) vg_err("burnin: results of %s not recorded by %s: %s", name, url, err);
    else if (status != 200)
        vg_err("burnin: results of %s not recorded by %s: HTTP %ld %s", name, url, status, resp ? resp : "");
    free(body);
    free(resp);
    vg_auth_free(&auth);
    return rc || status != 200 ? -1 : 0;
}

int vg_burnin_post(const struct vg_burnin_opts *o, const json_t *doc)
{
    char url[1100];
    vg_client_set_ca(o->ca_file);
    size_t len = strlen(o->controller);
    snprintf(url, sizeof url, "%.*s/v1/burnin", (int)(len && o->controller[len - 1] == '/' ? len - 1 : len),
             o->controller);
    int rc = 0;
    size_t i;
    json_t *node;
    json_array_foreach(json_object_get(doc, "nodes"), i, node) rc |= post_node(o, doc, node, url);
    return rc;
}
