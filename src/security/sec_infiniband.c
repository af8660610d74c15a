/* sec_infiniband.c — InfiniBand tenant partitioning: the partition keys of
 * every port (/sys/class/infiniband/DEV/ports/N/pkeys/I: only the default
 * full-member key 0xffff means no partitioning), the subnet manager's M_Key
 * (OpenSM config, where readable) and each port's link layer. */
#include "security/security.h"
#include "util/rootfs.h"
#include "util/sbuf.h"
#include "util/strutil.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IB_DIR "/sys/class/infiniband"

struct port {
    char name[160];          /* "mlx5_0/1" */
    char link_layer[32];
    int npkeys;              /* non-zero keys */
    bool custom;             /* a key other than the default 0xffff / 0x7fff */
    char keys[96];           /* the first few keys, for evidence */
    bool unreadable;
};

/* Every port of every device; returns the count, -1 when the class is absent. */
static int ports(const struct vg_sec_ctx *c, struct port **out)
{
    char **devs;
    int nd = vg_list_dir(c->root, IB_DIR, &devs);
    *out = NULL;
    if (nd < 0) return -1;
    int n = 0;
    for (int d = 0; d < nd; d++) {
        char path[512], **pn;
        snprintf(path, sizeof path, IB_DIR "/%s/ports", devs[d]);
        int np = vg_list_dir(c->root, path, &pn);
        for (int p = 0; p < np; p++) {
            *out = vg_xrealloc(*out, (size_t)(n + 1) * sizeof **out);
            struct port *pt = &(*out)[n++];
            *pt = (struct port){ 0 };
            snprintf(pt->name, sizeof pt->name, "%s/%s", devs[d], pn[p]);
            snprintf(path, sizeof path, IB_DIR "/%s/ports/%s/link_layer", devs[d], pn[p]);
            if (vg_read_line(c->root, path, pt->link_layer, sizeof pt->link_layer)) vg_strlcpy(pt->link_layer, "?", sizeof pt->link_layer);
            snprintf(path, sizeof path, IB_DIR "/%s/ports/%s/pkeys", devs[d], pn[p]);
            char **kn;
            int nk = vg_list_dir(c->root, path, &kn);
            if (nk < 0) pt->unreadable = true;
            for (int k = 0; k < nk && k < 256; k++) {
                char kp[640], v[32];
                snprintf(kp, sizeof kp, "%s/%s", path, kn[k]);
                if (vg_read_line(c->root, kp, v, sizeof v)) continue;
                unsigned long key = strtoul(v, NULL, 16);
                if ((key & 0x7fff) == 0) continue;
                pt->npkeys++;
                if ((key & 0x7fff) != 0x7fff) pt->custom = true;
                if (strlen(pt->keys) + strlen(v) + 2 < sizeof pt->keys)
                    snprintf(pt->keys + strlen(pt->keys), sizeof pt->keys - strlen(pt->keys), "%s%s", *pt->keys ? "," : "", v);
            }
            if (nk >= 0) vg_free_list(kn, nk);
        }
        if (np >= 0) vg_free_list(pn, np);
    }
    vg_free_list(devs, nd);
    return n;
}

static void pkeys(struct vg_sec_ctx *c, const struct vg_sec_check *k)
{
    struct port *p;
    int n = ports(c, &p);
    if (n <= 0) {
        vg_sec_emit(c, k, VG_SEC_UNKNOWN, IB_DIR ": no InfiniBand device", "could not check: no InfiniBand port on this node");
        free(p);
        return;
    }
    struct sbuf e = SBUF_INIT;
    int ib = 0, open_ports = 0, unread = 0;
    for (int i = 0; i < n; i++) {
        if (strcmp(p[i].link_layer, "InfiniBand")) continue;
        ib++;
        if (p[i].unreadable) { unread++; continue; }
        if (!p[i].custom) open_ports++;
        if (e.len < 400) sbuf_printf(&e, "%s%s pkeys=%s", e.len ? "; " : IB_DIR ": ", p[i].name, *p[i].keys ? p[i].keys : "none");
    }
    if (ib == 0) vg_sec_emit(c, k, VG_SEC_UNKNOWN, IB_DIR ": only Ethernet ports", "could not check: no InfiniBand link-layer port (RoCE uses VLANs)");
    else if (unread == ib) vg_sec_emit(c, k, VG_SEC_UNKNOWN, e.len ? e.s : IB_DIR, "could not check: pkeys not readable on %d port(s)", unread);
    else if (open_ports)
        vg_sec_emit(c, k, VG_SEC_FAIL, e.s, "%d of %d InfiniBand port(s) carry only the default key 0xffff: no tenant partitioning", open_ports, ib);
    else vg_sec_emit(c, k, VG_SEC_PASS, e.s, "every InfiniBand port is in a tenant partition");
    sbuf_free(&e);
    free(p);
}

static void link_layer(struct vg_sec_ctx *c, const struct vg_sec_check *k)
{
    struct port *p;
    int n = ports(c, &p);
    if (n <= 0) {
        vg_sec_emit(c, k, VG_SEC_UNKNOWN, IB_DIR ": no InfiniBand device", "could not check: no RDMA port on this node");
        free(p);
        return;
    }
    struct sbuf e = SBUF_INIT;
    int eth = 0;
    for (int i = 0; i < n; i++) {
        eth += !strcmp(p[i].link_layer, "Ethernet");
        if (e.len < 400) sbuf_printf(&e, "%s%s %s", e.len ? "; " : IB_DIR ": ", p[i].name, p[i].link_layer);
    }
    if (eth) vg_sec_emit(c, k, VG_SEC_WARN, e.s, "%d RoCE (Ethernet) port(s): their isolation rests on VLANs/ACLs, not pkeys", eth);
    else vg_sec_emit(c, k, VG_SEC_PASS, e.s, "%d InfiniBand port(s)", n);
    sbuf_free(&e);
    free(p);
}

static void mkey(struct vg_sec_ctx *c, const struct vg_sec_check *k)
{
    const char *path = c->conf && c->conf->opensm_conf ? c->conf->opensm_conf : "/etc/opensm/opensm.conf";
    char *text, e[700];
    if (vg_read_file(c->root, path, 4u << 20, &text, NULL)) {
        int err = errno;
        snprintf(e, sizeof e, "%s: %s", path, strerror(err));
        vg_sec_emit(c, k, VG_SEC_UNKNOWN, e, "could not check: %s", err == ENOENT ? "no OpenSM config here (the SM runs elsewhere)" : strerror(err));
        return;
    }
    char mk[64] = "", lvl[16] = "";
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char key[64], val[64];
        line = vg_trim(line);
        if (*line == '#' || sscanf(line, "%63s %63s", key, val) != 2) continue;
        if (!strcmp(key, "m_key")) vg_strlcpy(mk, val, sizeof mk);
        else if (!strcmp(key, "m_key_protection_level")) vg_strlcpy(lvl, val, sizeof lvl);
    }
    free(text);
    snprintf(e, sizeof e, "%s: m_key=%s m_key_protection_level=%s", path, *mk ? mk : "(unset)", *lvl ? lvl : "(unset)");
    unsigned long long key = strtoull(mk, NULL, 0);
    long level = 0;
    if (*lvl) vg_parse_long(lvl, &level);
    if (key == 0) vg_sec_emit(c, k, VG_SEC_FAIL, e, "no M_Key: any host can reconfigure the fabric's ports (SubnSet)");
    else if (level < 2) vg_sec_emit(c, k, VG_SEC_WARN, e, "M_Key set but protection level %ld: a host can read it and then use it", level);
    else vg_sec_emit(c, k, VG_SEC_PASS, e, "M_Key set with protection level %ld", level);
}

static const struct vg_sec_check checks[] = {
    { "ib.pkeys", "InfiniBand ports carry tenant partition keys", VG_SEV_HIGH,
      "define per-tenant partitions in the SM (partitions.conf) and drop the default full-member key from tenant ports", pkeys },
    { "ib.mkey", "the subnet manager protects ports with an M_Key", VG_SEV_HIGH,
      "set m_key to a random 64-bit value and m_key_protection_level 2 in opensm.conf", mkey },
    { "ib.link-layer", "RDMA ports' link layer (InfiniBand partitions vs RoCE VLANs)", VG_SEV_LOW,
      "on RoCE, isolate tenants with VLANs/VRFs and switch ACLs", link_layer },
};

const struct vg_sec_family vg_sec_infiniband = { "infiniband", checks, sizeof checks / sizeof checks[0] };
