/* check_fabric.c — the `fabric` check: the daemons a multi-node NVLink job
 * needs answer on their TCP ports (util/tcpprobe: a crashed daemon refuses,
 * a frozen one never reads — both fail within the check's own watchdog).
 *   manager=yes: NVIDIA Fabric Manager's API port (FM_CMD_PORT_NUMBER,
 *     6666 by default; HGX/DGX with NVSwitches on the node);
 *   imex=yes: the IMEX service's port (SERVER_PORT of
 *     /etc/nvidia-imex/config.cfg, 50000 by default; GB200/GB300 NVL72).
 * A number instead of yes names the port.
 *   * || fabric imex=yes */
#include "signal/checks.h"
#include "util/rootfs.h"
#include "util/strutil.h"
#include "util/tcpprobe.h"
#include "util/timeutil.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FM_PORT 6666            /* Fabric Manager user guide: FM_CMD_PORT_NUMBER */
#define IMEX_PORT 50000         /* IMEX guide: SERVER_PORT */
#define IMEX_CONFIG "/etc/nvidia-imex/config.cfg"
#define ANSWER_MS 1000

static const char *const fabric_keys[] = { "manager=*", "imex=*", NULL };

/* The IMEX service's port: its config's SERVER_PORT, else the default. */
static int imex_port(const char *root)
{
    char *text;
    int port = IMEX_PORT;
    if (vg_read_file(root, IMEX_CONFIG, 1 << 16, &text, NULL)) return port;
    char *save = NULL;
    for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        long v;
        if (vg_startswith(l, "SERVER_PORT=") && vg_parse_long(vg_trim(l + 12), &v) && v > 0 && v < 65536) port = (int)v;
    }
    free(text);
    return port;
}

static void one(const struct vg_check_ctx *ctx, const struct vg_check_line *l, const char *key, const char *what,
                int port, const char *kind, struct vg_check_results *out)
{
    const char *v = vg_check_get(l, key);
    long given;
    if (!v || vg_check_is_no(v)) return;
    if (vg_parse_long(v, &given) && given > 0 && given < 65536) port = (int)given;
    char name[64];
    snprintf(name, sizeof name, "fabric %s", key);
    enum vg_tcp_alive a = vg_tcp_probe("127.0.0.1", port, ANSWER_MS);
    struct vg_check_result *r = vg_check_add(out, l, a == VG_TCP_ALIVE, name, "%s %s on 127.0.0.1:%d", what,
                                             a == VG_TCP_ALIVE ? "answers" : "does not answer", port);
    if (a == VG_TCP_ALIVE) return;
    struct vg_event e;
    vg_event_init(&e);
    vg_strlcpy(e.node, ctx->node ? ctx->node : "", sizeof e.node);
    vg_strlcpy(e.source, "check", sizeof e.source);
    vg_strlcpy(e.kind, kind, sizeof e.kind);
    e.time_ms = e.seen_ms = vg_now_ms();
    vg_strlcpy(e.raw, r->detail, sizeof e.raw);
    vg_check_add_event(r, &e);
}

static void fabric_run(const struct vg_check_ctx *ctx, const struct vg_check_line *l, struct vg_check_results *out)
{
    one(ctx, l, "manager", "Fabric Manager", FM_PORT, "fabric-manager-down", out);
    one(ctx, l, "imex", "the IMEX service", imex_port(ctx->root), "imex-down", out);
}

/* With no config: IMEX where the node's GPUs register with an NVLink fabric
 * (its domain spans nodes), Fabric Manager where the node has NVSwitches. */
static void fabric_defaults(const struct vg_check_ctx *ctx, struct sbuf *out)
{
    bool fabric = false;
    for (int i = 0; ctx->gpus && i < ctx->gpus->n; i++) fabric |= ctx->gpus->gpus[i].fabric >= VG_FABRIC_PENDING;
    char **sw;
    int nsw = vg_list_dir(ctx->root, "/proc/driver/nvidia-nvswitch/devices", &sw);
    if (nsw > 0) vg_free_list(sw, nsw);
    if (fabric || nsw > 0)
        sbuf_printf(out, "* || fabric%s%s\n", nsw > 0 ? " manager=yes" : "", fabric ? " imex=yes" : "");
}

const struct vg_check vg_check_fabric = {
    .name = "fabric", .keys = fabric_keys, .run = fabric_run, .init = fabric_defaults, .defaults = fabric_defaults,
};
