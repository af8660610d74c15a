/* col_nicfw.c — collector for ConnectX / BlueField firmware, from sysfs:
 * /sys/class/infiniband/<dev>/fw_ver, board_id and hca_type (the PCI device
 * id, which names the model: NVIDIA's bulletins say per model which CVEs and
 * fixed versions apply).  Devices with the same firmware and board are
 * reported as one component listing them. */
#include "inventory/inventory.h"
#include "util/rootfs.h"
#include "util/strutil.h"
#include <stdio.h>
#include <string.h>

#define IB_CLASS "/sys/class/infiniband"

/* PCI device ids of the BlueField DPUs (hca_type "MT41686" = BlueField-2). */
static const struct { const char *hca, *model; } models[] = {
    { "MT4115", "ConnectX-4" },    { "MT4117", "ConnectX-4 Lx" }, { "MT4119", "ConnectX-5" },    { "MT4121", "ConnectX-5 Ex" }, { "MT4123", "ConnectX-6" },
    { "MT4125", "ConnectX-6 Dx" }, { "MT4127", "ConnectX-6 Lx" }, { "MT4129", "ConnectX-7" },
    { "MT4131", "ConnectX-8" },    { "MT41682", "BlueField" },    { "MT41686", "BlueField-2" },
    { "MT41692", "BlueField-3" },
};

static const char *model_of(const char *hca)
{
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++)
        if (!strcmp(models[i].hca, hca)) return models[i].model;
    return NULL;
}

static int collect(struct vg_inventory *inv)
{
    char **devs;
    int n = vg_list_dir(inv->root, IB_CLASS, &devs);
    for (int i = 0; i < n; i++) {
        char path[320], fw[64], board[64] = "", hca[32] = "";
        snprintf(path, sizeof path, IB_CLASS "/%s/fw_ver", devs[i]);
        if (vg_read_line(inv->root, path, fw, sizeof fw) < 0 || !fw[0]) continue;
        snprintf(path, sizeof path, IB_CLASS "/%s/board_id", devs[i]);
        if (vg_read_line(inv->root, path, board, sizeof board) < 0) board[0] = 0;
        snprintf(path, sizeof path, IB_CLASS "/%s/hca_type", devs[i]);
        if (vg_read_line(inv->root, path, hca, sizeof hca) < 0) hca[0] = 0;
        const char *model = model_of(hca);
        const char *name = model && vg_startswith(model, "BlueField") ? "bluefield-firmware" : "connectx-firmware";
        struct vg_component *c = NULL;
        for (size_t k = 0; k < inv->n && !c; k++) {
            struct vg_component *o = &inv->items[k];
            if (!strcmp(o->name, name) && !strcmp(o->version, fw) && !strcmp(o->package, board)) c = o;
        }
        if (c) { /* same firmware and board: add the device to its list */
            size_t l = strlen(c->detail);
            char *paren = strchr(c->detail, ')');
            if (paren && l + strlen(devs[i]) + 2 < sizeof c->detail) {
                char tail[128];
                vg_strlcpy(tail, paren, sizeof tail);
                snprintf(paren, sizeof c->detail - (size_t)(paren - c->detail), ",%s%s", devs[i], tail);
            }
            continue;
        }
        snprintf(path, sizeof path, IB_CLASS "/%s/fw_ver", devs[i]);
        c = vg_inventory_add(inv, name, fw, VG_ECO_NVIDIA, path);
        vg_strlcpy(c->package, board, sizeof c->package); /* the PSID names the firmware image */
        vg_strlcpy(c->model, model ? model : "", sizeof c->model);
        snprintf(c->detail, sizeof c->detail, "%s board %s (%s)", model ? model : hca[0] ? hca : "unknown",
                 board[0] ? board : "?", devs[i]);
    }
    if (n >= 0) vg_free_list(devs, n);
    return 0;
}

const struct vg_collector vg_col_nicfw = { "nic-firmware", collect, NULL, 0 };
