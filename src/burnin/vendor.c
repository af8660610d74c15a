/* vendor.c — whose burn-in suite a node's pass runs: the suites of the GPU
 * vendors (gpu.h's table) whose GPUs the probe found on the node, or those
 * named by --vendor.  A test of the table that names no vendor (the GPU
 * probe, InfiniBand, all_reduce_perf: nccl-tests and rccl-tests are one
 * program) is in every vendor's suite. */
#include "burnin/burnin_int.h"
#include "util/strutil.h"
#include <stdio.h>
#include <string.h>

/* Whether name is one of the comma-separated list. */
bool vg_bi_vendor_in(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        size_t l = strcspn(p, ",");
        if (l == n && !strncmp(p, name, n)) return true;
        p += l + (p[l] == ',');
    }
    return false;
}

static void vendor_names(char *buf, size_t n)
{
    buf[0] = 0;
    for (int i = 0; vg_gpu_vendors[i]; i++)
        snprintf(buf + strlen(buf), n - strlen(buf), "%s%s", i ? ", " : "", vg_gpu_vendors[i]->name);
}

int vg_bi_vendors_check(const char *list, char *err, size_t errlen)
{
    char names[128];
    vendor_names(names, sizeof names);
    if (!*list || strlen(list) >= sizeof ((struct vg_bi_node *)0)->vendors) {
        snprintf(err, errlen, "--vendor: '%.80s' is not a list of GPU vendors (%s)", list, names);
        return -1;
    }
    for (const char *p = list;;) {
        size_t l = strcspn(p, ",");
        char one[64];
        snprintf(one, sizeof one, "%.*s", (int)l, p);
        if (!vg_gpu_vendor_find(NULL, one)) {
            snprintf(err, errlen, "--vendor: '%s' is not a GPU vendor (%s)", one, names);
            return -1;
        }
        if (!p[l]) return 0;
        p += l + 1;
    }
}

static void add(char *list, size_t n, const char *name)
{
    if (!vg_bi_vendor_in(list, name)) snprintf(list + strlen(list), n - strlen(list), "%s%s", *list ? "," : "", name);
}

void vg_bi_pick_vendors(const struct vg_bi_opts *o, const struct vg_gpu_probe_result *p, struct vg_bi_node *out)
{
    out->vendors[0] = 0;
    if (o->vendors) {
        vg_strlcpy(out->vendors, o->vendors, sizeof out->vendors);
        vg_strlcpy(out->picked, "--vendor", sizeof out->picked);
        return;
    }
    /* the vendors whose library answered; else those whose driver is loaded (its library failed) */
    for (int i = 0; i < p->nvendors; i++)
        if (p->vendors[i].opened && p->vendors[i].v) add(out->vendors, sizeof out->vendors, p->vendors[i].v->name);
    if (out->vendors[0]) {
        vg_strlcpy(out->picked, "the GPUs found", sizeof out->picked);
        return;
    }
    for (int i = 0; i < p->nvendors; i++)
        if (p->vendors[i].present && p->vendors[i].v) add(out->vendors, sizeof out->vendors, p->vendors[i].v->name);
    if (out->vendors[0]) {
        vg_strlcpy(out->picked, "the GPU driver found (its library did not answer)", sizeof out->picked);
        return;
    }
    for (int i = 0; vg_gpu_vendors[i]; i++) add(out->vendors, sizeof out->vendors, vg_gpu_vendors[i]->name);
    vg_strlcpy(out->picked, "no GPU vendor answered: every vendor's", sizeof out->picked);
}
