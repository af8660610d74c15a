/* kmsg_amdgpu.c — the amdgpu recognizer: the AMD GPU driver's fault messages
 * (drivers/gpu/drm/amd/amdgpu: amdgpu_ras.c, amdgpu_ras_eeprom.c, amdgpu_job.c,
 * amdgpu_device.c, gmc_v9_0.c, the SMU and MES code, amdkfd) as events:
 *   amdgpu-ue            an uncorrectable error: "uncorrectable hardware
 *                        error(ERREVENT_ATHUB_INTERRUPT) detected!", "N
 *                        [new ]uncorrectable hardware errors detected in B block"
 *                        (code: the block's amdsmi bit, 0x10 for ATHUB)
 *   amdgpu-aca           an Accelerator Check Architecture bank dump ("[Hardware
 *                        Error]: Accelerator Check Architecture events logged"),
 *                        its "aca entry[NN].REG=0x…" lines folded into it
 *   amdgpu-ce            "N correctable hardware errors detected in B block"
 *   amdgpu-poison        poison created (code 0) or consumed (code 1)
 *   amdgpu-bad-pages     retired pages at the threshold, "consult AMD Service
 *                        Action Guide" (code 90: at 90 % of it, a warning)
 *   amdgpu-vm-fault      a GPU page fault ("[gfxhub0] no-retry page fault", the
 *                        VM_L2 / GCVM_L2 status lines and the process folded in)
 *   amdgpu-ring-timeout  "ring X timeout" and a queue that did not preempt
 *   amdgpu-gpu-reset     "GPU reset begin!" (what the driver did about it)
 *   amdgpu-mes           the MES firmware scheduler not answering
 *   amdgpu-smu           the SMU power-management firmware not answering
 *   amdgpu-init-failed   "Fatal error during GPU init" (the GPU is missing)
 * Facts only: the catalog's rows give AMD's verdicts.  Lines of one message
 * ("{1}" RAS event numbers, detail lines) join the event they belong to. */
#include "signal/amd.h"
#include "signal/kmsg_int.h"
#include "util/strutil.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The device a line names: "amdgpu 0000:1c:00.0: …" (or any "DRIVER BDF: "). */
static void line_pci(const char *msg, char out[16])
{
    out[0] = 0;
    const char *sp = strchr(msg, ' ');
    if (sp && sp - msg < 24 && vg_kmsg_pci_at(sp + 1, out)) return;
    out[0] = 0;
}

/* The RAS block named after "in " and before " block", as its bit in AMD SMI
 * and ROCm SMI (the code of a UE/CE event); -1 unknown. */
static int block_code(const char *in)
{
    const char *end = strstr(in, " block");
    const struct vg_amd_block *b = end ? vg_amd_block_named(in, (size_t)(end - in)) : NULL;
    return b ? (int)b->bit : -1;
}

/* "N [new ]uncorrectable hardware errors detected in B block": N (0: a count
 * of zero, not a fault), the block's code in *code; -1 when it is not such a line. */
static long count_line(const char *msg, const char *what, int *code)
{
    const char *w = strstr(msg, what);
    if (!w || w == msg) return -1;
    const char *in = strstr(w, " detected in ");
    if (!in || strstr(in, " in total in ")) return -1;   /* the running total repeats the news */
    /* the number just before what (and an optional "new ") */
    const char *p = w - 1;
    if (p - msg >= 4 && !strncmp(p - 4, " new", 4)) p -= 4;
    while (p > msg && *p == ' ') p--;
    const char *q = p;
    while (q > msg && isdigit((unsigned char)q[-1])) q--;
    if (q > p || !isdigit((unsigned char)*q)) return -1;
    long n = strtol(q, NULL, 10);
    *code = block_code(in + 13);
    return n;
}

/* Appends " | text" to the event's raw while it has room (whole pieces only). */
static void fold(struct vg_event *e, const char *text)
{
    size_t have = strlen(e->raw), add = strlen(text);
    if (have + 3 + add < sizeof e->raw) snprintf(e->raw + have, sizeof e->raw - have, " | %s", text);
}

/* "aca entry[00].STATUS=0x98000800003e0000": the entry, register and value;
 * false when the line is cut or malformed. */
static bool aca_register(const char *p, int *entry, char reg[16], unsigned long long *val)
{
    const char *a = strstr(p, "aca entry[");
    if (!a) return false;
    a += 10;
    char *end;
    long e = strtol(a, &end, 10);
    if (end == a || e < 0 || e > 999 || end[0] != ']' || end[1] != '.') return false;
    const char *r = end + 2, *eq = strchr(r, '=');
    if (!eq || eq == r || eq - r >= 16) return false;
    for (const char *c = r; c < eq; c++)
        if (!isalnum((unsigned char)*c)) return false;
    if (strncmp(eq + 1, "0x", 2)) return false;
    const char *h = eq + 3;
    size_t nd = 0;
    while (isxdigit((unsigned char)h[nd])) nd++;
    if (nd == 0 || nd > 16 || (h[nd] && h[nd] != ' ' && h[nd] != '\r')) return false;
    *entry = (int)e;
    memcpy(reg, r, (size_t)(eq - r));
    reg[eq - r] = 0;
    *val = strtoull(h, NULL, 16);
    return true;
}

/* A line that only repeats (or details) the event just seen on its device. */
static bool repeat_of(const struct vg_kmsg *k, const char *kind, const char *pci)
{
    return vg_kmsg_recent(k, kind, -1, pci);
}

static struct vg_event *start(struct vg_kmsg *k, const struct vg_kmsg_msg *m, const char *kind, int code,
                              const char *pci)
{
    return vg_kmsg_start(k, m, kind, code, pci, -1);
}

static int amdgpu_line(struct vg_kmsg *k, const struct vg_kmsg_msg *m, void *state)
{
    (void)state;
    const char *msg = m->msg, *p;
    char pci[16];
    line_pci(msg, pci);
    int code = -1;
    long n;
    if (strstr(msg, "uncorrectable hardware error(")) {   /* ERREVENT_ATHUB_INTERRUPT */
        start(k, m, "amdgpu-ue", strstr(msg, "ATHUB") ? 0x10 : -1, pci);
        return 1;
    }
    if ((n = count_line(msg, "uncorrectable hardware errors", &code)) >= 0) {
        if (n > 0) start(k, m, "amdgpu-ue", code, pci);
        return 1;
    }
    if ((n = count_line(msg, "correctable hardware errors", &code)) >= 0) {
        if (n > 0) start(k, m, "amdgpu-ce", code, pci);
        return 1;
    }
    if (strstr(msg, "Accelerator Check Architecture events logged")) {
        start(k, m, "amdgpu-aca", -1, pci);
        return 1;
    }
    if (strstr(msg, "aca entry[")) {   /* a bank register with no header held: malformed when cut */
        int e;
        char reg[16];
        unsigned long long v;
        return aca_register(msg, &e, reg, &v) ? 1 : -1;
    }
    if (strstr(msg, "oison is created") || strstr(msg, "poison is created")) {
        start(k, m, "amdgpu-poison", 0, pci);
        return 1;
    }
    if (strstr(msg, "oison is consumed") || strstr(msg, "poison consumption")) {
        start(k, m, "amdgpu-poison", 1, pci);
        return 1;
    }
    if (strstr(msg, "of threshold")) {   /* "RAS records:%u exceeds 90% of threshold:%d" */
        start(k, m, "amdgpu-bad-pages", 90, pci);
        return 1;
    }
    if ((strstr(msg, "Saved bad pages") && strstr(msg, "reaches threshold")) ||
        (strstr(msg, "RAS records:") && strstr(msg, "exceed threshold")) || strstr(msg, "Service Action Guide")) {
        if (!repeat_of(k, "amdgpu-bad-pages", pci)) start(k, m, "amdgpu-bad-pages", -1, pci);
        return 1;
    }
    if ((p = strstr(msg, "page fault (")) && (strstr(msg, "hub") || strstr(msg, "HUB"))) {
        start(k, m, "amdgpu-vm-fault", -1, pci);
        return 1;
    }
    if (strstr(msg, "L2_PROTECTION_FAULT_STATUS") || strstr(msg, "Faulty UTCL2 client") || strstr(msg, "MORE_FAULTS") ||
        strstr(msg, "WALKER_ERROR") || strstr(msg, "PERMISSION_FAULTS") || strstr(msg, "MAPPING_ERROR") ||
        strstr(msg, "in page starting at address") || strstr(msg, "cookie node_id"))
        return 1;   /* a page fault's detail whose header was not seen (or another GPU's, interleaved) */
    if (((p = strstr(msg, "ring ")) && strstr(p, " timeout")) || strstr(msg, "fence wait loop timeout") ||
        strstr(msg, "unsuccessful queues preemption")) {
        if (!repeat_of(k, "amdgpu-ring-timeout", pci)) start(k, m, "amdgpu-ring-timeout", -1, pci);
        return 1;
    }
    if (strstr(msg, "GPU reset begin")) {
        start(k, m, "amdgpu-gpu-reset", -1, pci);
        return 1;
    }
    if (strstr(msg, "MES failed to respon") || strstr(msg, "MES might be in unrecoverable state")) {
        if (!repeat_of(k, "amdgpu-mes", pci)) start(k, m, "amdgpu-mes", -1, pci);
        return 1;
    }
    if (strstr(msg, "SMU: I'm not done with your previous command") || strstr(msg, "Failed to export SMU metrics") ||
        strstr(msg, "SMU: No response") || ((p = strstr(msg, "Failed to send message 0x")) && strstr(p, "response"))) {
        if (!repeat_of(k, "amdgpu-smu", pci)) start(k, m, "amdgpu-smu", -1, pci);
        return 1;
    }
    if (strstr(msg, "Fatal error during GPU init") || strstr(msg, "amdgpu_device_ip_init failed")) {
        if (!repeat_of(k, "amdgpu-init-failed", pci)) start(k, m, "amdgpu-init-failed", -1, pci);
        return 1;
    }
    return 0;
}

/* The lines that complete the event held: a page fault's process and status,
 * a ring timeout's process (and, when its "[drm:…]" line named no device,
 * the device of the line that follows), a reset's progress, a bank dump's
 * registers — each on the event's own device. */
static bool amdgpu_continues(struct vg_kmsg *k, const struct vg_kmsg_msg *m, struct vg_event *pend, void *state)
{
    (void)k, (void)state;
    const char *msg = m->msg, *p;
    char pci[16];
    line_pci(msg, pci);
    bool same = !pci[0] || !pend->pci[0] || !strcmp(pci, pend->pci);
    if (!same) return false;
    if (!strcmp(pend->kind, "amdgpu-aca")) {
        int e;
        char reg[16];
        unsigned long long v;
        if (!aca_register(msg, &e, reg, &v)) return false;
        if (!strcmp(reg, "STATUS") || !strcmp(reg, "IPID") || !strcmp(reg, "ADDR")) {
            char t[64];
            snprintf(t, sizeof t, "aca[%02d] %s=0x%016llx", e, reg, v);
            fold(pend, t);
        }
        return true;
    }
    if (!strcmp(pend->kind, "amdgpu-vm-fault")) {
        if ((p = strstr(msg, "for process ")) || (p = strstr(msg, " Process "))) {
            char t[96];
            snprintf(t, sizeof t, "%.90s", p + (p[0] == ' ' ? 1 : 0));
            t[strcspn(t, ")")] = 0;
            fold(pend, t);
            return true;
        }
        if ((p = strstr(msg, "L2_PROTECTION_FAULT_STATUS:"))) {   /* VM_L2_… or GCVM_L2_… */
            while (p > msg && p[-1] != ' ') p--;
            char t[64];
            snprintf(t, sizeof t, "%.48s", p);
            fold(pend, t);
            return true;
        }
        return strstr(msg, "Faulty UTCL2 client") || strstr(msg, "MORE_FAULTS") || strstr(msg, "WALKER_ERROR") ||
               strstr(msg, "PERMISSION_FAULTS") || strstr(msg, "MAPPING_ERROR") || strstr(msg, " RW: ") ||
               strstr(msg, "in page starting at address") || strstr(msg, "cookie node_id");
    }
    if (!strcmp(pend->kind, "amdgpu-ring-timeout")) {
        if (!pend->pci[0] && pci[0]) vg_strlcpy(pend->pci, pci, sizeof pend->pci);   /* "[drm:…]" named none */
        if ((p = strstr(msg, "Process information: ")) || (p = strstr(msg, " Process "))) {
            char t[96];
            snprintf(t, sizeof t, "%.90s", p + (p[0] == ' ' ? 1 : 0));
            fold(pend, t);
            return true;
        }
        return strstr(msg, "ring reset") || strstr(msg, "reset failed") || strstr(msg, "Failed to evict");
    }
    if (!strcmp(pend->kind, "amdgpu-gpu-reset"))
        return strstr(msg, "BACO reset") || strstr(msg, "MODE1 reset") || strstr(msg, "MODE2 reset") ||
               strstr(msg, "GPU reset succeeded") || strstr(msg, "VRAM is lost");
    if (!strcmp(pend->kind, "amdgpu-init-failed")) return strstr(msg, "finishing device") != NULL;
    return false;
}

/* "dgpu", not "amdgpu": every line of the driver holds it, and the fast path's
 * pair "dg" is far rarer in kernel logs than "am" (name=, param, stream: on
 * bench/gen_kmsg's log "am" cost a third more CPU than "dg", which costs next
 * to nothing). */
static const char *const markers[] = { "dgpu", NULL };
static const char *const kinds[] = { "amdgpu-ue", "amdgpu-aca", "amdgpu-ce", "amdgpu-poison", "amdgpu-bad-pages",
                                     "amdgpu-vm-fault", "amdgpu-ring-timeout", "amdgpu-gpu-reset", "amdgpu-mes",
                                     "amdgpu-smu", "amdgpu-init-failed", NULL };

const struct vg_kmsg_recognizer vg_kmsg_amdgpu = {
    .name = "amdgpu",
    .markers = markers,
    .kinds = kinds,
    .state_size = 0,
    .line = amdgpu_line,
    .continues = amdgpu_continues,
};
