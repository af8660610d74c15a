/* sec_nvlink.c — the NVLink partition / IMEX boundary a node shows.  On a
 * multi-node NVLink system (GB200 NVL72, GH200 NVL32) the IMEX service shares
 * GPU memory between the nodes its nodes_config.cfg names (the file
 * IMEX_NODE_CONFIG_FILE in /etc/nvidia-imex/config.cfg points to), and a
 * process may import that memory only through an IMEX channel device,
 * /dev/nvidia-caps-imex-channels/channelN (NVIDIA IMEX guide, "IMEX
 * Channels": the channels give user-based memory isolation within an IMEX
 * domain; the administrator creates them with mknod, and the guide's example
 * channel0 is crw-rw-rw-).  A channel every local user can open lets any
 * tenant on the node join the domain's memory sharing; a nodes file others
 * can write lets them change which nodes are in the domain. */
#include "security/security.h"
#include "util/rootfs.h"
#include "util/sbuf.h"
#include "util/strutil.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IMEX_CONFIG "/etc/nvidia-imex/config.cfg"
#define IMEX_NODES_DEFAULT "/etc/nvidia-imex/nodes_config.cfg"
#define CHANNEL_DIR "/dev/nvidia-caps-imex-channels"

/* The nodes file config.cfg names (IMEX_NODE_CONFIG_FILE=PATH), else the default. */
static void nodes_file(const struct vg_sec_ctx *c, char *path, size_t n)
{
    vg_strlcpy(path, IMEX_NODES_DEFAULT, n);
    char *text;
    if (vg_read_file(c->root, IMEX_CONFIG, 1 << 20, &text, NULL)) return;
    for (char *line = text; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = 0;
        char *l = vg_trim(line);
        if (vg_startswith(l, "IMEX_NODE_CONFIG_FILE=") && l[22] == '/') vg_strlcpy(path, vg_trim(l + 22), n);
        line = nl ? nl + 1 : NULL;
    }
    free(text);
}

/* Appends the domain's extent to e ("PATH: N nodes (MODE)"); -1 when there is
 * no nodes file, else how many problems (the file writable by others). */
static int domain(const struct vg_sec_ctx *c, struct sbuf *e, struct sbuf *bad)
{
    char path[256], mode[48];
    nodes_file(c, path, sizeof path);
    char *text;
    struct stat st;
    if (vg_read_file(c->root, path, 1 << 20, &text, NULL) || vg_sec_stat(c, path, &st)) return -1;
    int nodes = 0;
    for (char *line = text; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = 0;
        char *l = vg_trim(line);
        nodes += *l && *l != '#';
        line = nl ? nl + 1 : NULL;
    }
    free(text);
    vg_sec_mode_str(&st, mode, sizeof mode);
    sbuf_printf(e, "%s: %d node%s (%s)", path, nodes, nodes == 1 ? "" : "s", mode);
    if (!(st.st_mode & 022)) return 0;
    sbuf_printf(bad, "%s%s is writable by others than its owner (%s)", bad->len ? "; " : "", path, mode);
    return 1;
}

static void imex(struct vg_sec_ctx *c, const struct vg_sec_check *k)
{
    struct sbuf e = SBUF_INIT, bad = SBUF_INIT;
    int problems = 0, in_domain = domain(c, &e, &bad);
    if (in_domain > 0) problems += in_domain;
    char **names;
    int n = vg_list_dir(c->root, CHANNEL_DIR, &names);
    if (n < 0 && errno != ENOENT) {
        sbuf_printf(&e, "%s%s: %s", e.len ? "; " : "", CHANNEL_DIR, strerror(errno));
        vg_sec_emit(c, k, VG_SEC_UNKNOWN, e.s, "could not check the IMEX channels: %s", strerror(errno));
        sbuf_free(&e), sbuf_free(&bad);
        return;
    }
    if (n < 0 && !vg_path_exists(c->root, "/dev")) {
        sbuf_printf(&e, "%s/dev: absent", e.len ? "; " : "");
        vg_sec_emit(c, k, VG_SEC_UNKNOWN, e.s, "could not check: no /dev under this root to read IMEX channels from");
        sbuf_free(&e), sbuf_free(&bad);
        return;
    }
    int channels = 0, open_to_all = 0;
    for (int i = 0; i < n; i++) {
        if (!vg_startswith(names[i], "channel")) continue;
        char p[300], mode[48];
        struct stat st;
        snprintf(p, sizeof p, "%s/%s", CHANNEL_DIR, names[i]);
        if (vg_sec_stat(c, p, &st)) continue;
        channels++;
        vg_sec_mode_str(&st, mode, sizeof mode);
        if (e.len < 400) sbuf_printf(&e, "%s%s %s", e.len ? ", " : "", p, mode);
        if (st.st_mode & 06) {
            open_to_all++;
            sbuf_printf(&bad, "%s%s is open to every user (%s)", bad.len ? "; " : "", p, mode);
        }
    }
    if (n >= 0) vg_free_list(names, n);
    problems += open_to_all;
    if (!channels) sbuf_printf(&e, "%s%s: no channel", e.len ? "; " : "", CHANNEL_DIR);
    if (problems)
        vg_sec_emit(c, k, VG_SEC_FAIL, e.s, "%s: %s", bad.s,
                    open_to_all ? "any tenant on this node can import the memory shared in its IMEX domain"
                                : "a tenant can change which nodes the IMEX domain spans");
    else if (channels)
        vg_sec_emit(c, k, VG_SEC_PASS, e.s, "%d IMEX channel%s, none open to every user", channels, channels == 1 ? "" : "s");
    else if (in_domain >= 0)
        vg_sec_emit(c, k, VG_SEC_PASS, e.s, "IMEX configured, but no channel device: no process can import memory");
    else
        vg_sec_emit(c, k, VG_SEC_PASS, e.s, "no IMEX domain on this node (no nodes_config.cfg, no channel)");
    sbuf_free(&e), sbuf_free(&bad);
}

static const struct vg_sec_check checks[] = {
    { "nvlink.imex", "the NVLink/IMEX domain's memory sharing is not open to every tenant", VG_SEV_HIGH,
      "give each tenant its own IMEX channel (mknod /dev/nvidia-caps-imex-channels/channelN, owned by the tenant, "
      "mode 0600 or 0660) instead of a channel0 open to all; keep nodes_config.cfg root-owned and 0644, naming "
      "only the nodes of one tenant's job",
      imex },
};

const struct vg_sec_family vg_sec_nvlink = { "nvlink", checks, sizeof checks / sizeof checks[0] };
