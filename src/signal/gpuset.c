/* gpuset.c — the table of GPU vendors and opening all of them together: each
 * present vendor's library is opened, its devices counted and each device
 * read tagged with its vendor.  A new vendor is one backend file and one line
 * in the table below (docs/gpu.md). */
#include "signal/gpu.h"
#include "util/strutil.h"
#include <string.h>

const struct vg_gpu_vendor *const vg_gpu_vendors[] = {
    &vg_gpu_nvidia,
    &vg_gpu_amd,
    NULL,
};

static char gpu_root[512];

void vg_gpu_set_root(const char *root) { vg_strlcpy(gpu_root, root ? root : "", sizeof gpu_root); }

const char *vg_gpu_root(void) { return gpu_root[0] ? gpu_root : NULL; }

const struct vg_gpu_vendor *vg_gpu_vendor_find(const struct vg_gpu_vendor *const *vendors, const char *name)
{
    if (!vendors) vendors = vg_gpu_vendors;
    for (size_t i = 0; name && vendors[i]; i++)
        if (strcmp(vendors[i]->name, name) == 0) return vendors[i];
    return NULL;
}

int vg_gpu_open_all(const struct vg_gpu_vendor *const *vendors, struct vg_gpu_set *set, vg_gpu_step_fn step,
                    void *arg)
{
    memset(set, 0, sizeof *set);
    if (!vendors) vendors = vg_gpu_vendors;
    bool any = false;
    for (size_t i = 0; vendors[i] && set->nvendors < VG_GPU_VENDORS_MAX; i++) {
        const struct vg_gpu_vendor *v = vendors[i];
        struct vg_gpu_set_vendor *s = &set->vendor[set->nvendors++];
        s->v = v;
        s->count = -1;
        s->present = !v->probe || v->probe();
        if (!s->present) continue;
        if (step) step(arg, v, "open");
        int rc = v->open(s->error, sizeof s->error);
        if (rc == VG_GPU_ABSENT) {
            s->present = false;
            s->error[0] = '\0';
            continue;
        }
        if (rc < 0) {
            if (!s->error[0]) vg_strlcpy(s->error, "cannot open", sizeof s->error);
            continue;
        }
        s->opened = any = true;
        if (v->driver_version && v->driver_version(s->driver, sizeof s->driver) < 0) s->driver[0] = '\0';
        if (step) step(arg, v, "devices");
        s->count = v->devices();
        if (s->count > 0) set->count += s->count;
    }
    return any ? set->count : -1;
}

const struct vg_gpu_vendor *vg_gpu_set_device(const struct vg_gpu_set *set, int i, int *index)
{
    for (int k = 0; k < set->nvendors && i >= 0; k++) {
        const struct vg_gpu_set_vendor *s = &set->vendor[k];
        if (!s->opened || s->count <= 0) continue;
        if (i < s->count) {
            *index = i;
            return s->v;
        }
        i -= s->count;
    }
    return NULL;
}

int vg_gpu_set_read(const struct vg_gpu_set *set, int i, struct vg_gpu_state *st)
{
    int index = -1;
    const struct vg_gpu_vendor *v = vg_gpu_set_device(set, i, &index);
    if (!v) {
        vg_gpu_state_init(st, i);
        vg_strlcpy(st->error, "no such device", sizeof st->error);
        return -1;
    }
    int rc = v->read(index, st);
    st->index = index;
    st->v = v;
    vg_strlcpy(st->vendor, v->name, sizeof st->vendor);
    if (!st->source[0]) vg_strlcpy(st->source, v->source, sizeof st->source);
    return rc;
}

void vg_gpu_close_all(struct vg_gpu_set *set)
{
    for (int k = 0; k < set->nvendors; k++)
        if (set->vendor[k].opened) {
            set->vendor[k].v->close();
            set->vendor[k].opened = false;
        }
}
