/* inject_fmt.c — what an injected fault looks like: the NVIDIA driver's own
 * wording for each XID (as it appears in real kernel logs, see
 * tests/fixtures/logs/), /dev/kmsg record framing, the fault kinds' names and
 * the GPUs' PCI addresses on an HGX board.  See inject.h. */
#include "drill/inject.h"
#include "util/strutil.h"
#include <stdio.h>
#include <string.h>

static const char *const kind_names[VG_INJ_COUNT] = {
    "xid", "gpu-lost", "ecc-dbe", "ib-down", "nvml-hang", "node-crash", "node-freeze",
    "sdc", "gpu-slow", "nccl-slow", "ib-bw-low", "dcgm-diag-fail",
};

const char *vg_inj_kind_name(enum vg_inj_kind k)
{
    return k >= 0 && k < VG_INJ_COUNT ? kind_names[k] : "?";
}

bool vg_inj_kind_parse(const char *s, enum vg_inj_kind *k, int *code)
{
    if (!s) return false;
    if (vg_startswith(s, "xid:")) {
        long c;
        if (!vg_parse_long(s + 4, &c) || c < 1 || c > 999) return false;
        *k = VG_INJ_XID;
        *code = (int)c;
        return true;
    }
    for (int i = 0; i < VG_INJ_COUNT; i++)
        if (!strcmp(s, kind_names[i])) {
            *k = (enum vg_inj_kind)i;
            return true;
        }
    return false;
}

static const char *const gpu_pci[8] = {
    "0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0", "0000:5d:00.0",
    "0000:9a:00.0", "0000:ab:00.0", "0000:ba:00.0", "0000:db:00.0",
};

const char *vg_inj_gpu_pci(int gpu) { return gpu >= 0 && gpu < 8 ? gpu_pci[gpu] : NULL; }

/* Each XID's text after "CODE, ".  %P is replaced by "pid=N, name=python3",
 * %G by the GPU index. */
static const struct {
    int code;
    const char *text;
} xid_text[] = {
    { 13, "%P, Graphics SM Warp Exception on (GPC 0, TPC 1, SM 0): Out Of Range Address" },
    { 31, "%P, channel 0x0000000c, intr 00000000. MMU Fault: ENGINE GRAPHICS GPC2 GPCCLIENT_T1_3 faulted "
          "@ 0x7f_12340000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ" },
    { 43, "%P, Ch 00000008" },
    { 45, "%P, Ch 00000001" },
    { 48, "pid='<unknown>', name=<unknown>, An uncorrectable double bit error (DBE) has been detected on GPU "
          "in the framebuffer at physAddr 0x3b1c0000 partition 7, subpartition 1." },
    { 61, "%P, Internal micro-controller breakpoint/warning (PMU halt)" },
    { 62, "%P, Internal micro-controller halt (PMU halt)" },
    { 63, "pid='<unknown>', name=<unknown>, Row Remapper: New row marked for remapping, reset gpu to activate." },
    { 64, "pid='<unknown>', name=<unknown>, Row Remapper: Failed to remap row, replace the GPU." },
    { 74, "%P, NVLink: fatal error detected on link 3(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)" },
    { 79, "%P, GPU has fallen off the bus." },
    { 92, "High single-bit ECC error rate" },
    { 94, "%P, Contained: SM (0x1). RST: No, D-RST: No" },
    { 95, "%P, Uncontained: FBHUB. RST: Yes, D-RST: No" },
    { 109, "%P, Ch 00000010, errorString CTX SWITCH TIMEOUT, Info 0x1c002" },
    { 119, "%P, Timeout after 6s of waiting for RPC response from GPU%G GSP! Expected function 76 "
           "(GSP_RM_CONTROL) (0x20803032 0x58c)." },
    { 120, "%P, GSP Error: Task 1 raised error code 0x5 for reason 0x0 at 0x5a7b8c (0 more errors skipped)" },
    { 154, "GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)" },
};

bool vg_xid_known(int code)
{
    for (size_t i = 0; i < sizeof xid_text / sizeof xid_text[0]; i++)
        if (xid_text[i].code == code) return true;
    return false;
}

size_t vg_xid_message(int code, const char *pci, int gpu, int pid, char *buf, size_t n)
{
    const char *text = "%P, Ch 00000008";
    for (size_t i = 0; i < sizeof xid_text / sizeof xid_text[0]; i++)
        if (xid_text[i].code == code) text = xid_text[i].text;
    /* the driver names the GPU by bus and device only: "PCI:0000:18:00" */
    char bdf[16];
    vg_strlcpy(bdf, pci && *pci ? pci : gpu_pci[0], sizeof bdf);
    char *dot = strrchr(bdf, '.');
    if (dot) *dot = 0;
    char tail[512];
    size_t t = 0;
    for (const char *p = text; *p && t < sizeof tail - 64; p++) {
        if (p[0] == '%' && p[1] == 'P') {
            t += (size_t)snprintf(tail + t, sizeof tail - t, "pid=%d, name=python3", pid);
            p++;
        }
        else if (p[0] == '%' && p[1] == 'G') {
            t += (size_t)snprintf(tail + t, sizeof tail - t, "%d", gpu < 0 ? 0 : gpu);
            p++;
        }
        else tail[t++] = *p;
    }
    tail[t] = 0;
    int w = snprintf(buf, n, "NVRM: Xid (PCI:%s): %d, %s", bdf, code, tail);
    return w < 0 ? 0 : (size_t)w;
}

size_t vg_kmsg_record(int prio, uint64_t seq, uint64_t usec, const char *msg, const char *pci, char *buf,
                      size_t n)
{
    int w = snprintf(buf, n, "%d,%llu,%llu,-;%s\n", prio, (unsigned long long)seq, (unsigned long long)usec,
                     msg);
    if (w > 0 && (size_t)w < n && pci && *pci) {
        int w2 = snprintf(buf + w, n - (size_t)w, " SUBSYSTEM=pci\n DEVICE=+pci:%s\n", pci);
        if (w2 > 0) w += w2;
    }
    return w < 0 ? 0 : (size_t)w;
}
