/* gpu.c — vendor-neutral GPU state: init, the vendor's extras, the JSON form
 * (what a probe child sends its parent) and the events a state implies, named
 * by its vendor's kinds; see gpu.h. */
#include "signal/gpu.h"
#include "signal/kmsg.h"
#include "util/jsonutil.h"
#include "util/strutil.h"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void vg_gpu_state_init(struct vg_gpu_state *st, int index)
{
    memset(st, 0, sizeof *st);
    st->index = index;
    st->ecc_ce = st->ecc_ue = st->ecc_ce_total = st->ecc_ue_total = -1;
    st->retired_ce = st->retired_ue = -1;
    st->retire_pending = -1;
    st->remap_ce = st->remap_ue = -1;
    st->remap_pending = st->remap_failure = -1;
    st->pcie_gen = st->pcie_width = st->pcie_gen_max = st->pcie_width_max = -1;
    st->links = -1;
    memset(st->link, -1, sizeof st->link);
    st->temp_c = -1;
    st->power_mw = -1;
    st->clock_sm_mhz = st->clock_mem_mhz = -1;
    st->throttle = -1;
    st->fabric = -1;
}

bool vg_gpu_extra_set(struct vg_gpu_state *st, const char *key, const char *fmt, ...)
{
    int i = 0;
    while (i < st->nextra && strcmp(st->extra[i].key, key) != 0) i++;
    if (i == VG_GPU_EXTRA_MAX) return false;
    if (i == st->nextra) st->nextra++;
    vg_strlcpy(st->extra[i].key, key, sizeof st->extra[i].key);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(st->extra[i].val, sizeof st->extra[i].val, fmt, ap);
    va_end(ap);
    return true;
}

const char *vg_gpu_extra(const struct vg_gpu_state *st, const char *key)
{
    for (int i = 0; i < st->nextra && i < VG_GPU_EXTRA_MAX; i++)
        if (strcmp(st->extra[i].key, key) == 0) return st->extra[i].val;
    return NULL;
}

bool vg_gpu_pci_id(const char *id, char out[16])
{
    size_t n = strlen(id);
    /* An 8-digit domain ("00000000:18:00.0"): its top half is always zero. */
    if (n == 16 && id[8] == ':' && strncmp(id, "0000", 4) == 0) id += 4, n -= 4;
    return vg_pci_normalize(id, n, out);
}

static const struct { long long bit; const char *name; } throttle_names[] = {
    { VG_THROTTLE_POWER_CAP, "power-cap" },     { VG_THROTTLE_HW_SLOWDOWN, "hw-slowdown" },
    { VG_THROTTLE_SW_THERMAL, "sw-thermal" },   { VG_THROTTLE_HW_THERMAL, "hw-thermal" },
    { VG_THROTTLE_POWER_BRAKE, "power-brake" },
};

const char *vg_gpu_throttle_names(long long bits, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof throttle_names / sizeof throttle_names[0] && bits > 0; i++)
        if (bits & throttle_names[i].bit)
            len += (size_t)snprintf(buf + (len < n ? len : n), len < n ? n - len : 0, "%s%s", len ? "," : "",
                                    throttle_names[i].name);
    if (!buf[0]) vg_strlcpy(buf, bits > 0 ? "other" : "none", n);
    return buf;
}

/* The integer fields, by name, for the JSON form. */
#define LL_FIELDS(X)                                                                                   \
    X(ecc_ce) X(ecc_ue) X(ecc_ce_total) X(ecc_ue_total) X(retired_ce) X(retired_ue) X(retire_pending) \
    X(remap_ce) X(remap_ue) X(remap_pending) X(remap_failure) X(pcie_gen) X(pcie_width) X(pcie_gen_max) \
    X(pcie_width_max) X(links) X(temp_c) X(power_mw) X(clock_sm_mhz) X(clock_mem_mhz) X(throttle)

static json_t *num_or_null(long long v) { return v < 0 ? json_null() : json_integer(v); }

json_t *vg_gpu_state_to_json(const struct vg_gpu_state *st)
{
    json_t *j = json_object();
    json_object_set_new(j, "index", json_integer(st->index));
    vg_json_set_str(j, "vendor", st->vendor);
    vg_json_set_str(j, "source", st->source);
    vg_json_set_str(j, "model", st->model);
    vg_json_set_str(j, "uuid", st->uuid);
    vg_json_set_str(j, "pci", st->pci);
    json_object_set_new(j, "lost", json_boolean(st->lost));
    vg_json_set_str(j, "error", st->error);
#define SET(f) json_object_set_new(j, #f, num_or_null(st->f));
    LL_FIELDS(SET)
#undef SET
    json_t *links = json_array();
    for (int i = 0; i < VG_GPU_LINKS_MAX && i < st->links; i++)
        json_array_append_new(links, st->link[i] < 0 ? json_null() : json_boolean(st->link[i] == 1));
    json_object_set_new(j, "link", links);
    static const char *const fabric[] = { [VG_FABRIC_PENDING] = "pending", [VG_FABRIC_OK] = "ok",
                                          [VG_FABRIC_FAILED] = "failed" };
    json_object_set_new(j, "fabric", st->fabric >= VG_FABRIC_PENDING && st->fabric <= VG_FABRIC_FAILED
                                         ? json_string(fabric[st->fabric]) : json_null());
    vg_json_set_str(j, "fabric_domain", st->fabric_domain);
    vg_json_set_str(j, "fabric_error", st->fabric_error);
    json_t *extra = json_object();
    for (int i = 0; i < st->nextra && i < VG_GPU_EXTRA_MAX; i++)
        json_object_set_new(extra, st->extra[i].key, json_string(st->extra[i].val));
    json_object_set_new(j, "extra", extra);
    return j;
}

int vg_gpu_state_from_json(const json_t *j, const struct vg_gpu_vendor *const *vendors, struct vg_gpu_state *st)
{
    if (!json_is_object(j) || !json_is_integer(json_object_get(j, "index"))) return -1;
    vg_gpu_state_init(st, (int)vg_json_int(j, "index", -1));
    vg_strlcpy(st->vendor, vg_json_str(j, "vendor", ""), sizeof st->vendor);
    st->v = vg_gpu_vendor_find(vendors, st->vendor);
    vg_strlcpy(st->source, vg_json_str(j, "source", ""), sizeof st->source);
    vg_strlcpy(st->model, vg_json_str(j, "model", ""), sizeof st->model);
    vg_strlcpy(st->uuid, vg_json_str(j, "uuid", ""), sizeof st->uuid);
    vg_strlcpy(st->pci, vg_json_str(j, "pci", ""), sizeof st->pci);
    vg_strlcpy(st->error, vg_json_str(j, "error", ""), sizeof st->error);
    st->lost = json_is_true(json_object_get(j, "lost"));
#define GET(f) st->f = vg_json_int(j, #f, -1);
    LL_FIELDS(GET)
#undef GET
    json_t *links = json_object_get(j, "link");
    size_t i;
    json_t *v;
    json_array_foreach(links, i, v) {
        if (i >= VG_GPU_LINKS_MAX) break;
        st->link[i] = json_is_boolean(v) ? (json_is_true(v) ? 1 : 0) : -1;
    }
    const char *fab = vg_json_str(j, "fabric", "");
    st->fabric = !strcmp(fab, "pending") ? VG_FABRIC_PENDING : !strcmp(fab, "ok") ? VG_FABRIC_OK
               : !strcmp(fab, "failed") ? VG_FABRIC_FAILED : -1;
    vg_strlcpy(st->fabric_domain, vg_json_str(j, "fabric_domain", ""), sizeof st->fabric_domain);
    vg_strlcpy(st->fabric_error, vg_json_str(j, "fabric_error", ""), sizeof st->fabric_error);
    const char *key;
    json_object_foreach(json_object_get(j, "extra"), key, v)
        if (json_is_string(v)) vg_gpu_extra_set(st, key, "%s", json_string_value(v));
    return 0;
}

static struct vg_event *add(const struct vg_gpu_state *st, const char *node, struct vg_event *ev, int *n,
                            int max, const char *kind)
{
    if (!kind) return NULL;   /* the vendor does not report this fault */
    struct vg_event *e = vg_event_append(ev, n, max, node, st->source, kind, st->pci);
    if (e) e->gpu = st->index;
    return e;
}

void vg_gpu_state_events(const struct vg_gpu_state *st, const char *node, struct vg_event *ev, int *n,
                         int max)
{
    const struct vg_gpu_vendor *v = st->v;
    /* A state knows its vendor (vg_gpu_set_read, the JSON form); of one that
     * does not, only a lost GPU can be told. */
    static const struct vg_gpu_kinds unknown = { .lost = "gpu-lost" };
    const struct vg_gpu_kinds *k = v ? &v->kinds : &unknown;
    const char *links = v && v->link_name ? v->link_name : "link";
    struct vg_event *e;
    if (st->lost) {
        if ((e = add(st, node, ev, n, max, k->lost)))
            snprintf(e->raw, sizeof e->raw, "GPU %d (%s) is lost: %s", st->index, st->pci, st->error);
        return;
    }
    const char *where = vg_gpu_extra(st, "ue_blocks");
    if (st->ecc_ue > 0 && (e = add(st, node, ev, n, max, k->ecc_ue)))
        snprintf(e->raw, sizeof e->raw, "GPU %d: %lld uncorrectable ECC errors since the driver loaded%s%s%s",
                 st->index, st->ecc_ue, where ? " (" : "", where ? where : "", where ? ")" : "");
    const char *pages = vg_gpu_extra(st, "bad_pages");
    if (st->remap_failure == 1 && (e = add(st, node, ev, n, max, k->remap_failure))) {
        if (pages)
            snprintf(e->raw, sizeof e->raw, "GPU %d: retired pages at the replacement threshold (%s)", st->index, pages);
        else
            snprintf(e->raw, sizeof e->raw, "GPU %d: row remapping failed (%lld uncorrectable rows)", st->index,
                     st->remap_ue);
    }
    if (st->remap_pending == 1 && (e = add(st, node, ev, n, max, k->remap_pending)))
        snprintf(e->raw, sizeof e->raw, "GPU %d: row remapping pending, reset required", st->index);
    if (st->retire_pending == 1 && (e = add(st, node, ev, n, max, k->retire_pending)))
        snprintf(e->raw, sizeof e->raw, "GPU %d: page retirement pending, reset required", st->index);
    /* Width only: an idle GPU lowers its link speed to save power. */
    if (st->pcie_width > 0 && st->pcie_width_max > 0 && st->pcie_width < st->pcie_width_max &&
        (e = add(st, node, ev, n, max, k->pcie_degraded)))
        snprintf(e->raw, sizeof e->raw, "GPU %d: PCIe link gen%d x%d, max gen%d x%d", st->index, st->pcie_gen,
                 st->pcie_width, st->pcie_gen_max, st->pcie_width_max);
    for (int l = 0; l < st->links && l < VG_GPU_LINKS_MAX; l++)
        if (st->link[l] == 0 && (e = add(st, node, ev, n, max, k->link_down))) {
            e->code = l;
            snprintf(e->raw, sizeof e->raw, "GPU %d: %s %d down", st->index, links, l);
        }
    if (st->throttle > 0 && (st->throttle & VG_THROTTLE_THERMAL) && (e = add(st, node, ev, n, max, k->thermal))) {
        char why[80];
        snprintf(e->raw, sizeof e->raw, "GPU %d: clocks slowed (%s, %d C)", st->index,
                 vg_gpu_throttle_names(st->throttle, why, sizeof why), st->temp_c);
    }
    if (st->fabric == VG_FABRIC_FAILED && (e = add(st, node, ev, n, max, k->fabric_failed)))
        snprintf(e->raw, sizeof e->raw, "GPU %d: %s fabric registration failed: %s", st->index, links,
                 st->fabric_error[0] ? st->fabric_error : "unknown error");
    if (st->fabric == VG_FABRIC_PENDING && (e = add(st, node, ev, n, max, k->fabric_pending)))
        snprintf(e->raw, sizeof e->raw, "GPU %d: %s fabric registration not finished", st->index, links);
}

void vg_gpu_fabric_domain(const struct vg_gpu_state *st, int n, char out[64], bool *conflict)
{
    out[0] = '\0';
    if (conflict) *conflict = false;
    for (int i = 0; i < n; i++) {
        if (st[i].fabric != VG_FABRIC_OK || !st[i].fabric_domain[0]) continue;
        if (!out[0]) vg_strlcpy(out, st[i].fabric_domain, 64);
        else if (strcmp(out, st[i].fabric_domain) != 0) {
            out[0] = '\0';
            if (conflict) *conflict = true;
            return;
        }
    }
}
