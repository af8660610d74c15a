/* gpu.c — backend-independent GPU state: init, JSON form (what a probe child
 * sends its parent) and the events a state implies; see gpu.h. */
#include "signal/gpu.h"
#include "signal/kmsg.h"
#include "util/jsonutil.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <stdio.h>
#include <string.h>

void vg_gpu_state_init(struct vg_gpu_state *st, int index)
{
    memset(st, 0, sizeof *st);
    st->index = index;
    st->ecc_sbe_volatile = st->ecc_dbe_volatile = st->ecc_sbe_aggregate = st->ecc_dbe_aggregate = -1;
    st->retired_sbe = st->retired_dbe = -1;
    st->retired_pending = -1;
    st->remap_correctable = st->remap_uncorrectable = -1;
    st->remap_pending = st->remap_failure = -1;
    st->pcie_gen = st->pcie_width = st->pcie_gen_max = st->pcie_width_max = -1;
    st->nvlink_links = -1;
    memset(st->nvlink, -1, sizeof st->nvlink);
    st->temp_c = -1;
    st->clock_reasons = -1;
}

bool vg_gpu_pci_id(const char *id, char out[16])
{
    size_t n = strlen(id);
    /* An 8-digit domain ("00000000:18:00.0"): its top half is always zero. */
    if (n == 16 && id[8] == ':' && strncmp(id, "0000", 4) == 0) id += 4, n -= 4;
    return vg_pci_normalize(id, n, out);
}

/* The integer fields, by name, for the JSON form. */
#define LL_FIELDS(X)                                                                               \
    X(ecc_sbe_volatile) X(ecc_dbe_volatile) X(ecc_sbe_aggregate) X(ecc_dbe_aggregate)             \
    X(retired_sbe) X(retired_dbe) X(retired_pending) X(remap_correctable) X(remap_uncorrectable)   \
    X(remap_pending) X(remap_failure) X(pcie_gen) X(pcie_width) X(pcie_gen_max) X(pcie_width_max) \
    X(nvlink_links) X(temp_c) X(clock_reasons)

static json_t *num_or_null(long long v) { return v < 0 ? json_null() : json_integer(v); }

json_t *vg_gpu_state_to_json(const struct vg_gpu_state *st)
{
    json_t *j = json_object();
    json_object_set_new(j, "index", json_integer(st->index));
    vg_json_set_str(j, "name", st->name);
    vg_json_set_str(j, "uuid", st->uuid);
    vg_json_set_str(j, "pci", st->pci);
    json_object_set_new(j, "lost", json_boolean(st->lost));
    vg_json_set_str(j, "error", st->error);
#define SET(f) json_object_set_new(j, #f, num_or_null(st->f));
    LL_FIELDS(SET)
#undef SET
    json_t *links = json_array();
    for (int i = 0; i < VG_NVLINK_MAX && i < st->nvlink_links; i++)
        json_array_append_new(links, st->nvlink[i] < 0 ? json_null() : json_boolean(st->nvlink[i] == 1));
    json_object_set_new(j, "nvlink", links);
    return j;
}

int vg_gpu_state_from_json(const json_t *j, struct vg_gpu_state *st)
{
    if (!json_is_object(j) || !json_is_integer(json_object_get(j, "index"))) return -1;
    vg_gpu_state_init(st, (int)vg_json_int(j, "index", -1));
    vg_strlcpy(st->name, vg_json_str(j, "name", ""), sizeof st->name);
    vg_strlcpy(st->uuid, vg_json_str(j, "uuid", ""), sizeof st->uuid);
    vg_strlcpy(st->pci, vg_json_str(j, "pci", ""), sizeof st->pci);
    vg_strlcpy(st->error, vg_json_str(j, "error", ""), sizeof st->error);
    st->lost = json_is_true(json_object_get(j, "lost"));
#define GET(f) st->f = vg_json_int(j, #f, -1);
    LL_FIELDS(GET)
#undef GET
    json_t *links = json_object_get(j, "nvlink");
    size_t i;
    json_t *v;
    json_array_foreach(links, i, v) {
        if (i >= VG_NVLINK_MAX) break;
        st->nvlink[i] = json_is_boolean(v) ? (json_is_true(v) ? 1 : 0) : -1;
    }
    return 0;
}

static struct vg_event *add(const struct vg_gpu_state *st, const char *node, struct vg_event *ev, int *n,
                            int max, const char *kind)
{
    struct vg_event *e = vg_event_append(ev, n, max, node, "nvml", kind, st->pci);
    if (e) e->gpu = st->index;
    return e;
}

void vg_gpu_state_events(const struct vg_gpu_state *st, const char *node, struct vg_event *ev, int *n,
                         int max)
{
    struct vg_event *e;
    if (st->lost) {
        if ((e = add(st, node, ev, n, max, "gpu-lost")))
            snprintf(e->raw, sizeof e->raw, "GPU %d (%s) is lost: %s", st->index, st->pci, st->error);
        return;
    }
    if (st->ecc_dbe_volatile > 0 && (e = add(st, node, ev, n, max, "ecc-dbe")))
        snprintf(e->raw, sizeof e->raw, "GPU %d: %lld volatile double-bit ECC errors", st->index,
                 st->ecc_dbe_volatile);
    if (st->remap_failure == 1 && (e = add(st, node, ev, n, max, "row-remap-failure")))
        snprintf(e->raw, sizeof e->raw, "GPU %d: row remapping failed (%lld uncorrectable rows)",
                 st->index, st->remap_uncorrectable);
    if (st->remap_pending == 1 && (e = add(st, node, ev, n, max, "row-remap-pending")))
        snprintf(e->raw, sizeof e->raw, "GPU %d: row remapping pending, reset required", st->index);
    if (st->retired_pending == 1 &&
        (e = add(st, node, ev, n, max, "retired-pages-pending")))
        snprintf(e->raw, sizeof e->raw, "GPU %d: page retirement pending, reset required", st->index);
    /* Width only: an idle GPU lowers its link speed to save power. */
    if (st->pcie_width > 0 && st->pcie_width_max > 0 && st->pcie_width < st->pcie_width_max &&
        (e = add(st, node, ev, n, max, "pcie-degraded")))
        snprintf(e->raw, sizeof e->raw, "GPU %d: PCIe link gen%d x%d, max gen%d x%d", st->index,
                 st->pcie_gen, st->pcie_width, st->pcie_gen_max, st->pcie_width_max);
    for (int l = 0; l < st->nvlink_links && l < VG_NVLINK_MAX; l++)
        if (st->nvlink[l] == 0 && (e = add(st, node, ev, n, max, "nvlink-down"))) {
            e->code = l;
            snprintf(e->raw, sizeof e->raw, "GPU %d: NVLink %d down", st->index, l);
        }
    if (st->clock_reasons > 0 &&
        (st->clock_reasons & (long long)(VG_CLK_HW_THERMAL | VG_CLK_SW_THERMAL | VG_CLK_HW_SLOWDOWN)) &&
        (e = add(st, node, ev, n, max, "thermal-slowdown")))
        snprintf(e->raw, sizeof e->raw, "GPU %d: clocks slowed (reasons 0x%llx, %d C)", st->index,
                 (unsigned long long)st->clock_reasons, st->temp_c);
}
