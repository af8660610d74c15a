/* kmsg_nvidia.c — the NVIDIA recognizer: NVRM Xid lines of every driver
 * generation, NVSwitch SXid, "GPU has fallen off the bus" (also multi-line
 * and without an Xid), RmInitAdapter failures and GSP RPC timeouts.  Its
 * kinds' verdicts are the catalog's xid, sxid, fallen-off-bus, rminit-failed
 * and gsp-timeout rows. */
#include "signal/kmsg_int.h"
#include "util/strutil.h"
#include <ctype.h>
#include <string.h>

/* A device named by an NVRM line ("NVRM: The NVIDIA GPU <bdf>", "NVRM: GPU at
 * PCI:…"), for a following line of the same record that names none. */
struct nv_state {
    char probe_pci[16];
    uint64_t probe_line;    /* k->lines when it was seen, 0: none */
};
_Static_assert(sizeof(struct nv_state) <= VG_KMSG_STATE_MAX, "NVIDIA recognizer state");

/* The device remembered within the last few lines, or "". */
static void remembered(const struct vg_kmsg *k, const struct nv_state *s, char pci[16])
{
    if (!pci[0] && s->probe_line && k->lines - s->probe_line <= 4) vg_strlcpy(pci, s->probe_pci, 16);
}

/* After "Xid"/"SXid": " (PCI:…): CODE" — the PCI id into pci ("" when the
 * parentheses hold none), the code into *code.  Returns where the text after
 * the code starts, or NULL when malformed (or when required parentheses are
 * missing). */
static const char *pci_and_code(const char *p, bool paren_required, char pci[16], int *code)
{
    while (*p == ' ') p++;
    pci[0] = '\0';
    if (*p == '(') {
        const char *close = strchr(p, ')');
        if (!close) return NULL;
        if (!vg_kmsg_pci_at(p + 1, pci)) pci[0] = '\0';
        p = close + 1;
    } else if (paren_required) {
        return NULL;
    }
    while (*p == ' ' || *p == ':') p++;
    if (!isdigit((unsigned char)*p)) return NULL;
    *code = 0;
    while (isdigit((unsigned char)*p)) {
        *code = *code * 10 + (*p++ - '0');
        if (*code > 1000000) return NULL;
    }
    return p;
}

/* "NVRM: Xid (PCI:0000:3b:00): 79, …"; -1 when malformed. */
static int xid(struct vg_kmsg *k, const struct vg_kmsg_msg *m, const char *x)
{
    char pci[16];
    int code;
    const char *p = pci_and_code(x + 3, false, pci, &code);
    if (!p || (*p != ',' && *p != '\0' && *p != ' ')) return -1;
    vg_kmsg_start(k, m, "xid", code, pci, vg_kmsg_gpu_index(p));
    return 1;
}

/* "nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 12028, Fatal, …" */
static int sxid(struct vg_kmsg *k, const struct vg_kmsg_msg *m, const char *x)
{
    char pci[16];
    int code;
    const char *p = pci_and_code(x + 4, true, pci, &code);
    if (!p) return -1;
    while (*p == ',' || *p == ' ') p++;
    /* The driver prints a record's details as further lines with the same SXid. */
    if (vg_startswith(p, "Severity") || vg_startswith(p, "Data") || vg_startswith(p, "Fatal error data")) return 1;
    vg_kmsg_start(k, m, "sxid", code, pci, -1);
    return 1;
}

static int nvrm(struct vg_kmsg *k, const struct vg_kmsg_msg *m, const char *nv, struct nv_state *s)
{
    const char *x = strstr(nv, "Xid");
    if (x && (x[3] == ' ' || x[3] == '(')) return xid(k, m, x);
    char pci[16] = "";
    const char *g = strstr(nv, "GPU ");
    if (g) vg_kmsg_pci_at(g + 4, pci);
    if (!pci[0] && (g = strstr(nv, "GPU at PCI:"))) vg_kmsg_pci_at(g + 7, pci);
    if (strstr(nv, "fallen off the bus")) {
        remembered(k, s, pci);
        s->probe_line = 0;
        if (vg_kmsg_recent(k, "xid", 79, pci) || vg_kmsg_recent(k, "fallen-off-bus", -1, pci)) return 1; /* same record */
        vg_kmsg_start(k, m, "fallen-off-bus", -1, pci, vg_kmsg_gpu_index(nv));
        return 1;
    }
    if (vg_startswith(nv, "NVRM: The NVIDIA GPU ") && pci[0]) {
        vg_strlcpy(s->probe_pci, pci, sizeof s->probe_pci);
        s->probe_line = k->lines;
        return 1;
    }
    if (strstr(nv, "RmInitAdapter failed")) {
        remembered(k, s, pci);
        vg_kmsg_start(k, m, "rminit-failed", -1, pci, vg_kmsg_gpu_index(nv));
        return 1;
    }
    if (strstr(nv, "GSP") && (strstr(nv, "Timeout") || strstr(nv, "timeout")) && !strstr(nv, "_kgspLogXid119")) {
        int gpu = vg_kmsg_gpu_index(nv);
        if (k->last_line && k->lines - k->last_line <= 8 && strcmp(k->last.kind, "xid") == 0 &&
            k->last.code == 119 && (gpu < 0 || k->last.gpu < 0 || k->last.gpu == gpu))
            return 1; /* the banner/detail of an Xid 119 */
        vg_kmsg_start(k, m, "gsp-timeout", -1, pci, gpu);
        return 1;
    }
    /* "NVRM: GPU at PCI:0000:01:00: GPU-uuid": remembered for a following multi-line record */
    if (pci[0]) {
        vg_strlcpy(s->probe_pci, pci, sizeof s->probe_pci);
        s->probe_line = k->lines;
    }
    return 1;
}

static int nvidia_line(struct vg_kmsg *k, const struct vg_kmsg_msg *m, void *state)
{
    const char *a;
    if ((a = strstr(m->msg, "NVRM:"))) return nvrm(k, m, a, state);
    if ((a = strstr(m->msg, "SXid"))) return sxid(k, m, a);
    return 0;
}

static const char *const markers[] = { "NVRM", "SXid", NULL };
static const char *const kinds[] = { "xid", "sxid", "fallen-off-bus", "rminit-failed", "gsp-timeout", NULL };

const struct vg_kmsg_recognizer vg_kmsg_nvidia = {
    .name = "nvidia",
    .markers = markers,
    .kinds = kinds,
    .state_size = sizeof(struct nv_state),
    .line = nvidia_line,
};
