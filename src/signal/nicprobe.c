/* nicprobe.c — the NIC probe's child and its parent's reading of it (see
 * nicprobe.h).  The child writes JSON lines: {"step":S,"dev":D,"port":P}
 * before each call that may hang, {"port":{…}} per port read from sysfs,
 * {"verbs":{…}} per port the RDMA stack answered for, {"verbs_rc":N,
 * "verbs_error":E} and {"done":true}. */
#include "signal/nicprobe.h"
#include "signal/probe.h"
#include "util/jsonutil.h"
#include "util/strutil.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void put(FILE *out, json_t *j)
{
    vg_json_print(out, j, 1);
    fflush(out);
}

static void step(void *arg, const char *what, const char *dev, int port)
{
    put(arg, json_pack("{s:s,s:s,s:i}", "step", what, "dev", dev, "port", port));
}

/* The counters travel as numbers; VG_SYSFS_MISSING and VG_SYSFS_GARBAGE as they are. */
#define PORT_COUNTERS(X)                                                                                       \
    X(link_downed) X(link_error_recovery) X(symbol_error) X(port_rcv_errors) X(local_link_integrity_errors)   \
    X(excessive_buffer_overrun_errors) X(port_xmit_discards) X(carrier_changes) X(rx_errors) X(tx_errors)

static json_t *port_json(const struct vg_ib_port *p)
{
    json_t *j = json_pack("{s:s,s:i,s:s,s:i,s:s,s:s,s:s,s:i,s:s}", "dev", p->dev, "port", p->port, "pci", p->pci,
                          "state", p->state, "state_name", p->state_name, "link_layer", p->link_layer, "netdev",
                          p->netdev, "gpu", p->gpu, "gpu_pci", p->gpu_pci);
#define SET(f) json_object_set_new(j, #f, json_integer(p->f));
    PORT_COUNTERS(SET)
#undef SET
    return j;
}

static void port_from_json(const json_t *j, struct vg_ib_port *p)
{
    memset(p, 0, sizeof *p);
    vg_strlcpy(p->dev, vg_json_str(j, "dev", ""), sizeof p->dev);
    p->port = (int)vg_json_int(j, "port", 0);
    vg_strlcpy(p->pci, vg_json_str(j, "pci", ""), sizeof p->pci);
    p->state = (int)vg_json_int(j, "state", -1);
    vg_strlcpy(p->state_name, vg_json_str(j, "state_name", ""), sizeof p->state_name);
    vg_strlcpy(p->link_layer, vg_json_str(j, "link_layer", ""), sizeof p->link_layer);
    vg_strlcpy(p->netdev, vg_json_str(j, "netdev", ""), sizeof p->netdev);
    p->gpu = (int)vg_json_int(j, "gpu", -1);
    vg_strlcpy(p->gpu_pci, vg_json_str(j, "gpu_pci", ""), sizeof p->gpu_pci);
#define GET(f) p->f = vg_json_int(j, #f, VG_SYSFS_MISSING);
    PORT_COUNTERS(GET)
#undef GET
}

static int child(void *arg, FILE *out)
{
    const char *root = arg;
    step(out, "sysfs", "", 0);
    struct vg_ib_port *ports;
    size_t n = vg_ib_ports(root, &ports);
    for (size_t i = 0; i < n; i++) put(out, json_pack("{s:o}", "port", port_json(&ports[i])));
    free(ports);
    struct vg_verbs_port v[VG_NIC_VERBS_MAX];
    int nv = 0;
    char err[256];
    int rc = vg_verbs_walk(step, out, v, VG_NIC_VERBS_MAX, &nv, err, sizeof err);
    for (int i = 0; i < nv; i++)
        put(out, json_pack("{s:{s:s,s:i,s:i,s:i}}", "verbs", "dev", v[i].dev, "port", v[i].port, "state", v[i].state,
                           "link_layer", v[i].link_layer));
    put(out, json_pack("{s:i,s:s}", "verbs_rc", rc, "verbs_error", err));
    put(out, json_pack("{s:b}", "done", 1));
    return 0;
}

int vg_nic_probe_start(struct vg_probe *p, const char *root)
{
    return vg_probe_start(p, "nic", child, (void *)root);   /* the child's copy of the caller's memory */
}

void vg_nic_probe_collect(struct vg_probe *p, struct vg_nic_probe_result *r)
{
    memset(r, 0, sizeof *r);
    r->elapsed_ms = p->elapsed_ms;
    r->verbs_rc = -1;
    char *save = NULL;
    for (char *line = p->out.s ? strtok_r(p->out.s, "\n", &save) : NULL; line; line = strtok_r(NULL, "\n", &save)) {
        json_t *j = json_loads(line, 0, NULL), *x;
        if (!j) continue;   /* a line cut by the kill */
        if ((x = json_object_get(j, "step")) && json_is_string(x)) {
            if (strcmp(r->step, "sysfs") == 0) r->ports_read = true;   /* the next step began: sysfs answered */
            vg_strlcpy(r->step, json_string_value(x), sizeof r->step);
            vg_strlcpy(r->step_dev, vg_json_str(j, "dev", ""), sizeof r->step_dev);
            r->step_port = (int)vg_json_int(j, "port", 0);
        } else if ((x = json_object_get(j, "port")) && json_is_object(x)) {
            r->ports = vg_xrealloc(r->ports, sizeof *r->ports * (r->nports + 1));
            port_from_json(x, &r->ports[r->nports++]);
        } else if ((x = json_object_get(j, "verbs")) && json_is_object(x) && r->nverbs < VG_NIC_VERBS_MAX) {
            struct vg_verbs_port *v = &r->verbs[r->nverbs++];
            vg_strlcpy(v->dev, vg_json_str(x, "dev", ""), sizeof v->dev);
            v->port = (int)vg_json_int(x, "port", 0);
            v->state = (int)vg_json_int(x, "state", -1);
            v->link_layer = (int)vg_json_int(x, "link_layer", 0);
        } else if (json_is_integer(json_object_get(j, "verbs_rc"))) {
            r->verbs_rc = (int)vg_json_int(j, "verbs_rc", -1);
            vg_strlcpy(r->verbs_error, vg_json_str(j, "verbs_error", ""), sizeof r->verbs_error);
        } else if (json_is_true(json_object_get(j, "done")))
            r->done = true;
        json_decref(j);
    }
    if (r->done) r->ports_read = true;
    r->starved = !r->done && p->starved;
    r->hung = !r->done && p->timed_out && !p->starved;
}

void vg_nic_probe_free(struct vg_nic_probe_result *r)
{
    free(r->ports);
    r->ports = NULL;
    r->nports = 0;
}

const char *vg_nic_probe_hung_text(const struct vg_nic_probe_result *r, char *buf, size_t n)
{
    const char *call = !strcmp(r->step, "sysfs") ? "reading /sys/class/infiniband" : vg_verbs_call_name(r->step);
    char port[24] = "";
    if (r->step_port > 0) snprintf(port, sizeof port, " (port %d)", r->step_port);
    snprintf(buf, n, "%s%s%s%s did not answer within %lld ms", r->step_dev, r->step_dev[0] ? " unresponsive: "
             : "the RDMA stack: ", call, port, (long long)r->elapsed_ms);
    return buf;
}

void vg_nic_probe_events(const struct vg_nic_probe_result *r, const char *node, struct vg_event *ev, int *n,
                         int max)
{
    if (!r->hung) return;
    const char *pci = "";
    for (size_t i = 0; i < r->nports && r->step_dev[0]; i++)
        if (!strcmp(r->ports[i].dev, r->step_dev)) pci = r->ports[i].pci;
    struct vg_event *e = vg_event_append(ev, n, max, node, "probe", "nic-hung", pci);
    if (!e) return;
    e->code = r->step_port > 0 ? r->step_port : -1;
    vg_nic_probe_hung_text(r, e->raw, sizeof e->raw);
}
