/* amd_sysfs.c — the AMD layer that needs no library: what the amdgpu driver
 * itself publishes under /sys/class/drm/cardN/device (read under --root, so a
 * fixture tree or a mounted node disk reads as if live): RAS error counts per
 * block (ras/<block>_err_count), retired VRAM pages (ras/gpu_vram_bad_pages)
 * against the module's bad_page_threshold, the PCIe link (current_ and
 * max_link_width / _speed), the XGMI hive (xgmi_hive_info/xgmi_hive_id), the
 * product name, unique id and edge temperature (hwmon).  The same reads fill
 * what a library left unknown (vg_amd_sysfs_enrich). */
#include "signal/amd.h"
#include "util/rootfs.h"
#include "util/strutil.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CARDS 64
#define DRM "/sys/class/drm"

static struct {
    char root[512];
    int n;
    char card[MAX_CARDS][16];   /* "card3", in the order of their numbers */
} S;

bool vg_amd_driver_loaded(const char *root) { return vg_path_exists(root, "/sys/module/amdgpu"); }

/* DRM/cardN/device/REL into buf (trimmed first line); false when unreadable. */
static bool dev_line(const char *card, const char *rel, char *buf, size_t n)
{
    char path[256];
    snprintf(path, sizeof path, DRM "/%s/device/%s", card, rel);
    return vg_read_line(S.root, path, buf, n) == 0;
}

static bool dev_text(const char *card, const char *rel, char **text, size_t *len)
{
    char path[256];
    snprintf(path, sizeof path, DRM "/%s/device/%s", card, rel);
    return vg_read_file(S.root, path, 1 << 20, text, len) == 0;
}

static long long dev_num(const char *card, const char *rel)
{
    char b[64];
    long v;
    if (!dev_line(card, rel, b, sizeof b) || !vg_parse_long(b, &v) || v < 0) return -1;
    return v;
}

static int card_number(const char *name)
{
    if (strncmp(name, "card", 4) || !name[4]) return -1;
    for (const char *p = name + 4; *p; p++)
        if (!isdigit((unsigned char)*p)) return -1;   /* card0-DP-1: a connector, not a GPU */
    return atoi(name + 4);
}

static int by_number(const void *a, const void *b)
{
    return card_number((const char *)a) - card_number((const char *)b);
}

static int sysfs_open(const char *root, char *err, size_t n)
{
    (void)err, (void)n;
    memset(&S, 0, sizeof S);
    vg_strlcpy(S.root, root && *root ? root : "/", sizeof S.root);
    char **names;
    int k = vg_list_dir(S.root, DRM, &names);
    for (int i = 0; i < k; i++) {
        char vendor[16];
        if (card_number(names[i]) < 0 || S.n == MAX_CARDS) continue;
        if (!dev_line(names[i], "vendor", vendor, sizeof vendor) || strcasecmp(vendor, "0x1002")) continue;
        vg_strlcpy(S.card[S.n++], names[i], sizeof S.card[0]);
    }
    if (k > 0) vg_free_list(names, k);
    qsort(S.card, (size_t)S.n, sizeof S.card[0], by_number);
    return S.n > 0 ? 0 : VG_GPU_ABSENT;
}

static int sysfs_devices(void) { return S.n; }

/* The PCI address of a card: PCI_SLOT_NAME in its uevent, else the name its
 * device link points at. */
static bool card_pci(const char *card, char out[16])
{
    char *text;
    size_t len;
    if (dev_text(card, "uevent", &text, &len)) {
        const char *p = strstr(text, "PCI_SLOT_NAME=");
        bool ok = p && vg_gpu_pci_id(strndupa(p + 14, strcspn(p + 14, "\n")), out);
        free(text);
        if (ok) return true;
    }
    char link[256], path[128];
    snprintf(path, sizeof path, DRM "/%s/device", card);
    if (vg_read_link(S.root, path, link, sizeof link)) return false;
    const char *base = strrchr(link, '/');
    return vg_gpu_pci_id(base ? base + 1 : link, out);
}

/* "32.0 GT/s PCIe" → 5 (the generation whose rate it is), -1 unknown. */
static int pcie_gen(const char *speed)
{
    static const struct { double gts; int gen; } g[] = { { 2.5, 1 }, { 5, 2 }, { 8, 3 }, { 16, 4 }, { 32, 5 }, { 64, 6 } };
    double v = strtod(speed, NULL);
    for (size_t i = 0; i < sizeof g / sizeof g[0]; i++)
        if (v > g[i].gts - 0.1 && v < g[i].gts + 0.1) return g[i].gen;
    return -1;
}

/* The RAS files of a card into r; a malformed one is named in st->error. */
static void read_ras(const char *card, struct vg_amd_ras *r, struct vg_gpu_state *st)
{
    for (size_t b = 0; b < VG_AMD_BLOCKS; b++) {
        char rel[64], *text;
        size_t len;
        snprintf(rel, sizeof rel, "ras/%s_err_count", vg_amd_blocks[b].name);
        if (!dev_text(card, rel, &text, &len)) continue;
        int rc = vg_amd_parse_err_count(text, len, &r->ue[b], &r->ce[b]);
        free(text);
        if (rc < 0) {
            r->ue[b] = r->ce[b] = -1;
            if (!st->error[0]) snprintf(st->error, sizeof st->error, "%s/device/%s: not 'ue: N' and 'ce: N'", card, rel);
        }
    }
    char *text;
    size_t len;
    if (dev_text(card, "ras/gpu_vram_bad_pages", &text, &len)) {
        int bad = vg_amd_parse_bad_pages(text, len, &r->bad_reserved, &r->bad_pending, &r->bad_failed);
        free(text);
        if (bad && !st->error[0])
            snprintf(st->error, sizeof st->error, "%s/device/ras/gpu_vram_bad_pages: %d malformed line%s skipped", card,
                     bad, bad == 1 ? "" : "s");
    }
    char t[32];
    long v;
    if (vg_read_line(S.root, "/sys/module/amdgpu/parameters/bad_page_threshold", t, sizeof t) == 0 &&
        vg_parse_long(t, &v) && v > 0)
        r->bad_threshold = v;
}

/* The first hwmon directory's temp1_input (millidegrees), in °C; -1 unknown. */
static int edge_temp(const char *card)
{
    char dir[128], **names;
    snprintf(dir, sizeof dir, DRM "/%s/device/hwmon", card);
    int k = vg_list_dir(S.root, dir, &names);
    int temp = -1;
    for (int i = 0; i < k && temp < 0; i++) {
        char rel[128];
        snprintf(rel, sizeof rel, "hwmon/%s/temp1_input", names[i]);
        long long mc = dev_num(card, rel);
        if (mc >= 0) temp = (int)(mc / 1000);
    }
    if (k > 0) vg_free_list(names, k);
    return temp;
}

static void read_card(const char *card, struct vg_gpu_state *st)
{
    char b[128];
    if (!st->pci[0]) card_pci(card, st->pci);
    if (!st->model[0] && dev_line(card, "product_name", b, sizeof b) && b[0]) vg_strlcpy(st->model, b, sizeof st->model);
    if (!st->model[0] && dev_line(card, "device", b, 16)) snprintf(st->model, sizeof st->model, "AMD GPU %.16s", b);
    if (!st->uuid[0] && dev_line(card, "unique_id", b, sizeof b) && b[0]) vg_strlcpy(st->uuid, b, sizeof st->uuid);
    struct vg_amd_ras r;
    vg_amd_ras_init(&r);
    read_ras(card, &r, st);
    struct vg_gpu_state ras;
    vg_gpu_state_init(&ras, st->index);
    vg_amd_ras_to_state(&r, &ras);
    if (st->ecc_ue < 0) st->ecc_ue = ras.ecc_ue;
    if (st->ecc_ce < 0) st->ecc_ce = ras.ecc_ce;
    if (st->retired_ue < 0) st->retired_ue = ras.retired_ue, st->remap_ue = ras.remap_ue;
    if (st->remap_failure < 0) st->remap_failure = ras.remap_failure;
    for (int i = 0; i < ras.nextra; i++)
        if (!vg_gpu_extra(st, ras.extra[i].key)) vg_gpu_extra_set(st, ras.extra[i].key, "%s", ras.extra[i].val);
    if (st->pcie_width < 0) st->pcie_width = (int)dev_num(card, "current_link_width");
    if (st->pcie_width_max < 0) st->pcie_width_max = (int)dev_num(card, "max_link_width");
    if (st->pcie_gen < 0 && dev_line(card, "current_link_speed", b, sizeof b)) st->pcie_gen = pcie_gen(b);
    if (st->pcie_gen_max < 0 && dev_line(card, "max_link_speed", b, sizeof b)) st->pcie_gen_max = pcie_gen(b);
    long long hive = dev_num(card, "xgmi_hive_info/xgmi_hive_id");
    if (hive > 0 && !vg_gpu_extra(st, "xgmi_hive")) vg_gpu_extra_set(st, "xgmi_hive", "0x%llx", hive);
    if (st->temp_c < 0) st->temp_c = edge_temp(card);
}

static int sysfs_read(int index, struct vg_gpu_state *st)
{
    if (index < 0 || index >= S.n) {
        vg_strlcpy(st->error, "no such AMD GPU in sysfs", sizeof st->error);
        return -1;
    }
    char path[128];
    snprintf(path, sizeof path, DRM "/%s/device", S.card[index]);
    if (!vg_path_exists(S.root, path)) {   /* gone since the count: it fell off the bus */
        st->lost = true;
        snprintf(st->error, sizeof st->error, "%s: the device is gone from sysfs", S.card[index]);
        return -1;
    }
    read_card(S.card[index], st);
    return 0;
}

int vg_amd_sysfs_enrich(const char *pci, struct vg_gpu_state *st)
{
    for (int i = 0; i < S.n && pci[0]; i++) {
        char p[16];
        if (card_pci(S.card[i], p) && !strcmp(p, pci)) {
            read_card(S.card[i], st);
            return 0;
        }
    }
    return -1;
}

static void sysfs_close(void) { S.n = 0; }

const struct vg_amd_layer vg_amd_sysfs = {
    .name = "sysfs",
    .label = "amdgpu sysfs",
    .open = sysfs_open,
    .devices = sysfs_devices,
    .read = sysfs_read,
    .reset = NULL,
    .close = sysfs_close,
};
