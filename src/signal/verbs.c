/* verbs.c — the RDMA stack through libibverbs: the only file in vigil that
 * knows it exists.  libibverbs.so.1 is loaded with dlopen (its path
 * overridable with $VIGIL_VERBS_LIB, which the tests and the lab point at a
 * fake library whose devices can hang); the declarations below are vigil's
 * own copy of the few parts of rdma-core's public <infiniband/verbs.h> it
 * uses.  Every call may block on a wedged driver, so the walk runs in a
 * watchdog child (nicprobe.c) and says each step before it takes it. */
#include "signal/verbs.h"
#include "util/strutil.h"
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the public ABI (rdma-core, libibverbs/verbs.h) ---- */
struct ibv_device;     /* opaque here */
struct ibv_context;    /* opaque here */
/* struct ibv_port_attr up to the link layer; the library may write more in
 * a newer version, hence the room after it. */
struct ibv_port_attr {
    int state;         /* enum ibv_port_state: 4 = IBV_PORT_ACTIVE */
    int max_mtu, active_mtu;
    int gid_tbl_len;
    uint32_t port_cap_flags, max_msg_sz, bad_pkey_cntr, qkey_viol_cntr;
    uint16_t pkey_tbl_len, lid, sm_lid;
    uint8_t lmc, max_vl_num, sm_sl, subnet_timeout, init_type_reply, active_width, active_speed, phys_state,
        link_layer;
};
union port_attr_room {
    struct ibv_port_attr a;
    unsigned char room[512];
};

static struct {
    void *lib;
    struct ibv_device **(*get_device_list)(int *);
    void (*free_device_list)(struct ibv_device **);
    const char *(*get_device_name)(struct ibv_device *);
    struct ibv_context *(*open_device)(struct ibv_device *);
    int (*close_device)(struct ibv_context *);
    int (*query_port)(struct ibv_context *, uint8_t, struct ibv_port_attr *);
} V;

static const struct {
    const char *name;
    void **slot;
} syms[] = {
    { "ibv_get_device_list", (void **)&V.get_device_list }, { "ibv_free_device_list", (void **)&V.free_device_list },
    { "ibv_get_device_name", (void **)&V.get_device_name }, { "ibv_open_device", (void **)&V.open_device },
    { "ibv_close_device", (void **)&V.close_device },       { "ibv_query_port", (void **)&V.query_port },
};

static int load(char *err, size_t errlen)
{
    const char *path = getenv("VIGIL_VERBS_LIB");
    bool given = path && *path;
    if (!given) path = "libibverbs.so.1";
    V.lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!V.lib) {
        snprintf(err, errlen, "cannot load %s: %s", path, dlerror());
        return given ? -1 : VG_VERBS_ABSENT;   /* no RDMA stack installed: nothing to probe */
    }
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++)
        if (!(*syms[i].slot = dlsym(V.lib, syms[i].name))) {
            snprintf(err, errlen, "%s: missing symbol %s", path, syms[i].name);
            dlclose(V.lib);
            memset(&V, 0, sizeof V);
            return -1;
        }
    return 0;
}

int vg_verbs_walk(vg_verbs_step_fn step, void *arg, struct vg_verbs_port *out, int max, int *nout, char *err,
                  size_t errlen)
{
    *nout = 0;
    err[0] = '\0';
    step(arg, "load", "", 0);
    int rc = load(err, errlen);
    if (rc) return rc;
    step(arg, "list", "", 0);
    int n = 0;
    struct ibv_device **list = V.get_device_list(&n);
    if (!list) {   /* ENOSYS: the kernel has no RDMA subsystem (no device, nothing to probe) */
        int e = errno;
        snprintf(err, errlen, "ibv_get_device_list: %s", strerror(e));
        dlclose(V.lib);
        memset(&V, 0, sizeof V);
        return e == ENOSYS ? VG_VERBS_ABSENT : -1;
    }
    for (int d = 0; d < n && !rc; d++) {
        char name[32];
        vg_strlcpy(name, V.get_device_name(list[d]) ? V.get_device_name(list[d]) : "?", sizeof name);
        step(arg, "open", name, 0);
        struct ibv_context *ctx = V.open_device(list[d]);
        if (!ctx) {
            snprintf(err, errlen, "ibv_open_device %s failed", name);
            rc = -1;
            break;
        }
        /* ports are numbered from 1; the first that does not answer ends them */
        for (int port = 1; port <= VG_VERBS_PORTS_MAX; port++) {
            step(arg, "query", name, port);
            union port_attr_room pa;
            memset(&pa, 0, sizeof pa);
            if (V.query_port(ctx, (uint8_t)port, &pa.a)) break;
            if (*nout < max) {
                struct vg_verbs_port *p = &out[(*nout)++];
                vg_strlcpy(p->dev, name, sizeof p->dev);
                p->port = port;
                p->state = pa.a.state;
                p->link_layer = pa.a.link_layer;
            }
        }
        step(arg, "close", name, 0);
        V.close_device(ctx);
    }
    V.free_device_list(list);
    dlclose(V.lib);   /* one walk per load: the next finds the library as it is then */
    memset(&V, 0, sizeof V);
    return rc;
}

const char *vg_verbs_call_name(const char *step)
{
    static const struct { const char *step, *call; } calls[] = {
        { "load", "loading libibverbs" },     { "list", "ibv_get_device_list" },
        { "open", "ibv_open_device" },        { "query", "ibv_query_port" },
        { "close", "ibv_close_device" },
    };
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
        if (!strcmp(calls[i].step, step)) return calls[i].call;
    return step;
}

const char *vg_verbs_state_name(int state)
{
    static const char *const names[] = { "NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER" };
    return state >= 0 && state < (int)(sizeof names / sizeof names[0]) ? names[state] : "?";
}
