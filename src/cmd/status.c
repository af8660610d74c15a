/* status.c — `vigil status [--controller URL] [--root DIR] [--json]`: one
 * screen of what vigil sees on this node — the GPUs and driver of each vendor present,
 * the kernel log, InfiniBand ports, the scheduler, the controller, the check
 * configuration and the advisory database — each line with what to do when
 * something is missing.  Exit 0 when everything is there, 1 otherwise. */
#include "cmd/cmd.h"
#include "cmd/opts.h"
#include "orch/orch.h"
#include "signal/gpu.h"
#include "signal/gpuprobe.h"
#include "signal/sysfs.h"
#include "util/datadir.h"
#include "util/jsonutil.h"
#include "util/log.h"
#include "util/rootfs.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include "wire/client.h"
#include "wire/leader.h"
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STATUS_USAGE "usage: vigil status [--controller URL] [--root DIR] [--json]\n"

struct line {
    char item[32];
    bool ok;
    char detail[300];
    char fix[300];
};

#define MAX_LINES 16

static struct line *add(struct line *l, size_t *n, const char *item, bool ok)
{
    struct line *x = &l[(*n)++];
    memset(x, 0, sizeof *x);
    vg_strlcpy(x->item, item, sizeof x->item);
    x->ok = ok;
    return x;
}

/* One line per GPU vendor present ("GPUs (NVML)"), or one "GPUs" line when none is. */
static void gpus(struct line *l, size_t *n, const char *root)
{
    struct vg_gpu_probe_result r;
    vg_gpu_probe(NULL, 5000, &r);
    bool any = false;
    for (int k = 0; k < r.nvendors && *n < MAX_LINES - 8; k++) {
        const struct vg_gpu_probe_vendor *v = &r.vendors[k];
        if (!v->present) continue;
        any = true;
        char item[32], mod[128], drv[64] = "";
        snprintf(item, sizeof item, "GPUs (%s)", v->v->label);
        bool hung = r.hung && r.hung_vendor == v->v;
        struct line *x = add(l, n, item, v->opened && !hung && v->count > 0);
        const char *model = "?";
        for (int i = 0; i < r.n; i++)
            if (!strcmp(r.gpus[i].vendor, v->v->name)) {
                model = r.gpus[i].model;
                break;
            }
        snprintf(mod, sizeof mod, "/sys/module/%s/version", v->v->kmod ? v->v->kmod : "");
        if (!v->v->kmod || vg_read_line(root, mod, drv, sizeof drv)) vg_strlcpy(drv, v->driver, sizeof drv);
        if (hung)
            vg_gpu_probe_hung_text(&r, x->detail, sizeof x->detail),
                snprintf(x->fix, sizeof x->fix, "the driver is wedged: `vigil check` reports it; a reboot clears it");
        else if (!v->opened)
            snprintf(x->detail, sizeof x->detail, "%s", v->error), snprintf(x->fix, sizeof x->fix, "%s", v->v->hint);
        else
            snprintf(x->detail, sizeof x->detail, "%d × %s, driver %s", v->count, model,
                     drv[0] ? drv : "(version not reported)");
        if (!x->ok && !x->fix[0]) snprintf(x->fix, sizeof x->fix, "no GPU found: is this a GPU node?");
    }
    if (!any) {
        struct line *x = add(l, n, "GPUs", false);
        snprintf(x->detail, sizeof x->detail, "%s", r.error);
        snprintf(x->fix, sizeof x->fix, "no GPU found: is this a GPU node?");
    }
    vg_gpu_probe_free(&r);
}

static void kmsg(struct line *l, size_t *n, const char *root)
{
    char *p = vg_root_path(root, "/dev/kmsg");
    int fd = open(p, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct line *x = add(l, n, "kernel log", fd >= 0);
    snprintf(x->detail, sizeof x->detail, "%s %s", p, fd >= 0 ? "readable" : "not readable");
    if (fd < 0) snprintf(x->fix, sizeof x->fix, "run the agent as root, or give it --kmsg FILE (a syslog or dmesg file)");
    else close(fd);
    free(p);
}

static void ib(struct line *l, size_t *n, const char *root)
{
    struct vg_ib_port *p;
    size_t np = vg_ib_ports(root, &p), active = 0;
    for (size_t i = 0; i < np; i++) active += p[i].state == 4;
    struct line *x = add(l, n, "InfiniBand", np > 0 && active == np);
    if (!np) {
        snprintf(x->detail, sizeof x->detail, "no port under /sys/class/infiniband");
        snprintf(x->fix, sizeof x->fix, "none on this node, or the HCA driver (mlx5_core, ib_core) is not loaded");
    } else {
        snprintf(x->detail, sizeof x->detail, "%zu port(s), %zu ACTIVE", np, active);
        if (active < np) snprintf(x->fix, sizeof x->fix, "`vigil check` names the ports that are down");
    }
    free(p);
}

static void schedulers(struct line *l, size_t *n)
{
    for (size_t i = 0; vg_orch_at(i) && *n < MAX_LINES - 3; i++) {
        const struct vg_orch_ops *ops = vg_orch_at(i);
        char err[256], node[64];
        struct vg_orch_conf c = { .timeout_ms = 3000 };
        struct vg_orch *o = vg_orch_open_ops(ops, &c, err, sizeof err);
        struct vg_orch_node *ns = NULL;
        size_t nn = 0;
        bool ok = o && ops->nodes(o, NULL, 0, &ns, &nn) == 0;
        struct line *x = add(l, n, "scheduler", ok);
        vg_orch_local_node(ops, node, sizeof node);
        if (ok) snprintf(x->detail, sizeof x->detail, "%s: %zu node(s); this node is %s", ops->name, nn, node);
        else {
            snprintf(x->detail, sizeof x->detail, "%s: %.200s", ops->name, o ? o->err : err);
            snprintf(x->fix, sizeof x->fix, "not a %s node, or its configuration is elsewhere (--orch-config FILE)", ops->name);
        }
        free(ns);
        vg_orch_close(o);
    }
}

static void controller(struct line *l, size_t *n, const char *url)
{
    struct line *x = add(l, n, "controller", false);
    if (!url || !*url) {
        snprintf(x->detail, sizeof x->detail, "none configured");
        snprintf(x->fix, sizeof x->fix, "run `vigil serve` once per cluster and give agents --controller URL "
                                        "($VIGIL_CONTROLLER); alone, `vigil agent --drain` acts on its own node");
        return;
    }
    char u[600], err[256], leader[512];
    /* several controllers sharing a store: the one that leads */
    bool list = strchr(url, ',') != NULL;
    if (vg_ctl_pick_leader(url, leader, sizeof leader, err, sizeof err)) {
        snprintf(x->detail, sizeof x->detail, "%s", err);
        snprintf(x->fix, sizeof x->fix, "give --controller URL1,URL2,... (or $VIGIL_CONTROLLER) without empty items");
        return;
    }
    url = leader;
    snprintf(u, sizeof u, "%s/healthz", url);
    long st = 0;
    char *body = NULL;
    int rc = vg_client_get(u, NULL, 2000, &st, &body, err, sizeof err);
    x->ok = rc == 0 && st == 200;
    snprintf(x->detail, sizeof x->detail, "%.200s %.60s%s", url, x->ok ? "answers" : rc ? err : "answered with an error",
             x->ok && list && body && strstr(body, "\nrole leader\n") ? " (the leader of the list)" : "");
    if (!x->ok) snprintf(x->fix, sizeof x->fix, "is `vigil serve` running there, and its port open to this node?");
    free(body);
}

static void files(struct line *l, size_t *n, const char *root)
{
    bool conf = vg_path_exists(root, "/etc/vigil/vigil.conf");
    struct line *x = add(l, n, "check config", true);
    snprintf(x->detail, sizeof x->detail, "%s", conf ? "/etc/vigil/vigil.conf" : "none: the built-in checks run");
    if (!conf) snprintf(x->fix, sizeof x->fix, "`vigil check --init --config /etc/vigil/vigil.conf` on a healthy node");
    char *p = vg_data_path("advisories.json");
    json_error_t e;
    json_t *db = json_load_file(p, JSON_DISABLE_EOF_CHECK, &e);
    const char *gen = vg_json_str(db, "generated", NULL);
    int64_t at = 0;
    if (!gen || !vg_parse_time(gen, &at)) at = 0;
    long days = at ? (long)((vg_now_ms() - at) / 86400000) : -1;
    x = add(l, n, "advisories", db && days >= 0 && days <= 90);
    if (!db) snprintf(x->detail, sizeof x->detail, "%s: %s", p, e.text);
    else
        snprintf(x->detail, sizeof x->detail, "%zu advisories, generated %s (%ld days ago)",
                 json_array_size(json_object_get(db, "advisories")), gen ? gen : "?", days);
    if (!x->ok) snprintf(x->fix, sizeof x->fix, "import fresh ones: `vigil advisories import` (docs/audit.md)");
    json_decref(db);
    free(p);
}

int cmd_status(int argc, char **argv)
{
    static const struct option own[] = {
        { "root", required_argument, 0, 'R' }, { "json", no_argument, 0, 'j' }, { "help", no_argument, 0, 'h' },
        { 0, 0, 0, 0 },
    };
    struct vg_opts_buf ob;
    const struct option *opts = vg_opts_table(own, VG_OPTS_CONTROLLER, &ob);
    struct vg_shared_opts so = { .controller = getenv("VIGIL_CONTROLLER") };
    const char *root = NULL;
    bool json = false;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'R': root = optarg; break;
        case 'j': json = true; break;
        case 'h': fputs(STATUS_USAGE, stdout); return VG_EXIT_OK;
        default:
            if (vg_opts_take(c, optarg, &so)) break;
            fputs(STATUS_USAGE, stderr);
            return vg_input_error("status: unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    const char *url = so.controller;
    if (optind < argc) return vg_input_error("status: unexpected argument '%s'", argv[optind]);
    struct line l[MAX_LINES];
    size_t n = 0;
    gpus(l, &n, root);
    kmsg(l, &n, root);
    ib(l, &n, root);
    schedulers(l, &n);
    controller(l, &n, url);
    files(l, &n, root);
    bool all = true;
    for (size_t i = 0; i < n; i++) all = all && l[i].ok;
    if (json) {
        json_t *arr = json_array();
        for (size_t i = 0; i < n; i++) {
            json_t *o = json_pack("{s:s, s:b, s:s}", "item", l[i].item, "ok", l[i].ok, "detail", l[i].detail);
            vg_json_set_str(o, "fix", l[i].fix[0] ? l[i].fix : NULL);
            json_array_append_new(arr, o);
        }
        vg_json_print(stdout, json_pack("{s:b, s:o}", "ok", all, "items", arr), 0);
    } else
        for (size_t i = 0; i < n; i++) {
            printf("%-4s %-13s %s\n", l[i].ok ? "ok" : "--", l[i].item, l[i].detail);
            if (l[i].fix[0]) printf("%-18s → %s\n", "", l[i].fix);
        }
    return all ? VG_EXIT_OK : VG_EXIT_FINDINGS;
}
