/* fake_verbs.c — a fake libibverbs.so.1 for tests and the lab: the verbs
 * calls vigil's RDMA probe makes (src/signal/verbs.c), with the devices, their
 * ports and the calls that never return (a wedged NIC driver) read from the
 * text file named by $FAKE_VERBS_STATE on every call, so `vigil inject
 * nic-hung` can wedge a lab node's NIC while its agent runs.  Format:
 * README.md here.  Links with libc only. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAXDEV 16

struct ibv_device { char name[32]; };
struct ibv_context { struct ibv_device *dev; };
struct ibv_port_attr {   /* as rdma-core's, up to the link layer */
    int state, max_mtu, active_mtu, gid_tbl_len;
    unsigned int port_cap_flags, max_msg_sz, bad_pkey_cntr, qkey_viol_cntr;
    unsigned short pkey_tbl_len, lid, sm_lid;
    unsigned char lmc, max_vl_num, sm_sl, subnet_timeout, init_type_reply, active_width, active_speed, phys_state,
        link_layer;
};

static struct ibv_device devs[MAXDEV];
static struct ibv_device *list[MAXDEV + 1];

/* The value of key ("devices", "hang", "mlx5_0.state" …); the last line wins. */
static int lookup(const char *key, char *val, size_t n)
{
    const char *path = getenv("FAKE_VERBS_STATE");
    FILE *f = path ? fopen(path, "re") : NULL;
    if (!f) return 0;
    char line[512];
    size_t kl = strlen(key);
    int found = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = 0;
        if (!strncmp(line, key, kl) && line[kl] == '=') {
            snprintf(val, n, "%s", line + kl + 1);
            found = 1;
        }
    }
    fclose(f);
    return found;
}

static int listed(const char *key, const char *name)
{
    char v[512];
    if (!lookup(key, v, sizeof v)) return 0;
    for (char *t = strtok(v, ", "); t; t = strtok(NULL, ", "))
        if (!strcmp(t, name)) return 1;
    return 0;
}

/* A call of dev (NULL: a global call) listed in hang= never returns, like a wedged driver. */
static void maybe_hang(const char *dev, const char *call)
{
    char key[64];
    snprintf(key, sizeof key, "%s%shang", dev ? dev : "", dev ? "." : "");
    if (listed(key, call))
        for (;;) pause();
}

static long num(const char *dev, const char *key, long def)
{
    char k[96], v[64];
    snprintf(k, sizeof k, "%s.%s", dev, key);
    return lookup(k, v, sizeof v) ? strtol(v, NULL, 0) : def;
}

struct ibv_device **ibv_get_device_list(int *num_devices)
{
    maybe_hang(NULL, "list");
    char v[512] = "mlx5_0";
    lookup("devices", v, sizeof v);
    int n = 0;
    for (char *t = strtok(v, ", "); t && n < MAXDEV; t = strtok(NULL, ", ")) {
        snprintf(devs[n].name, sizeof devs[n].name, "%s", t);
        list[n] = &devs[n];
        n++;
    }
    list[n] = NULL;
    if (num_devices) *num_devices = n;
    return list;
}

void ibv_free_device_list(struct ibv_device **l) { (void)l; }

const char *ibv_get_device_name(struct ibv_device *d) { return d ? d->name : NULL; }

struct ibv_context *ibv_open_device(struct ibv_device *d)
{
    maybe_hang(d->name, "open");
    struct ibv_context *c = calloc(1, sizeof *c);
    if (c) c->dev = d;
    return c;
}

int ibv_close_device(struct ibv_context *c)
{
    maybe_hang(c->dev->name, "close");
    free(c);
    return 0;
}

int ibv_query_port(struct ibv_context *c, unsigned char port, struct ibv_port_attr *a)
{
    maybe_hang(c->dev->name, "query");
    if (port < 1 || port > num(c->dev->name, "ports", 1)) return EINVAL;
    memset(a, 0, sizeof *a);
    a->state = (int)num(c->dev->name, "state", 4);
    a->phys_state = a->state == 4 ? 5 : 3;
    a->link_layer = (unsigned char)num(c->dev->name, "link_layer", 1);
    return 0;
}
