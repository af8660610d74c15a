/* inject_fmt.c — what an injected fault looks like: the NVIDIA driver's own
 * wording for each XID (as it appears in real kernel logs, see
 * tests/fixtures/logs/), /dev/kmsg record framing, the fault kinds' names and
 * the GPUs' PCI addresses on an HGX board.  See inject.h. */
#include "drill/inject.h"
#include "util/strutil.h"
#include <stdio.h>
#include <string.h>

const char *vg_inj_kind_name(enum vg_inj_kind k)
{
    const struct vg_inj_ops *o = vg_inj_ops(k);
    return o ? o->name : "?";
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
        if (vg_inj_ops((enum vg_inj_kind)i) && !strcmp(s, vg_inj_ops((enum vg_inj_kind)i)->name)) {
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

/* 0c and 1c: the first MI300X GPUs of AMD's amd-smi example; the rest: the
 * MI300X node of legacy-rocm-build#4021. */
static const char *const amd_pci[8] = {
    "0000:0c:00.0", "0000:1c:00.0", "0000:3d:00.0", "0000:42:00.0",
    "0000:55:00.0", "0000:9e:00.0", "0000:c2:00.0", "0000:e6:00.0",
};

const char *vg_inj_amd_pci(int gpu) { return gpu >= 0 && gpu < 8 ? amd_pci[gpu] : NULL; }

/* The amdgpu driver's messages, as real kernel logs print them (see
 * tests/fixtures/logs/amdgpu-*.log): the ATHUB interrupt of an MI300X
 * (#4021), a ring timeout with its process and the reset it starts (the
 * format of kernels since 6.x, cosmic-epoch#3764; MI300's compute rings are
 * comp_X.Y.Z), a failed init (MI210, rocm-install-on-linux#615); retired
 * pages at the threshold in amdgpu_ras_eeprom.c's words (no published line). */
int vg_amd_messages(enum vg_inj_kind kind, const char *pci, int pid, char msgs[][512], int max)
{
    int n = 0;
    int seq = 1000 + pid % 50000;
#define MSG(...) (n < max ? (void)snprintf(msgs[n++], 512, __VA_ARGS__) : (void)0)
    switch (kind) {
    case VG_INJ_AMD_UE: MSG("amdgpu %s: {%d}uncorrectable hardware error(ERREVENT_ATHUB_INTERRUPT) detected!", pci, 1 + pid % 9); break;
    case VG_INJ_AMD_BAD_PAGES:
        MSG("amdgpu %s: amdgpu: Saved bad pages 8 reaches threshold value 8", pci);
        MSG("amdgpu %s: amdgpu: Please consult AMD Service Action Guide (SAG) for appropriate service procedures.", pci);
        break;
    case VG_INJ_AMD_RING_TIMEOUT:
        MSG("amdgpu %s: ring comp_1.0.0 timeout, signaled seq=%d, emitted seq=%d", pci, seq, seq + 2);
        MSG("amdgpu %s:  Process python3 pid %d thread python3 pid %d", pci, pid, pid);
        MSG("amdgpu %s: GPU reset begin!. Source:  1", pci);
        break;
    case VG_INJ_AMD_INIT_FAIL: MSG("amdgpu %s: amdgpu: Fatal error during GPU init", pci); break;
    default: break;   /* an XGMI link down writes no line: the counters tell */
    }
#undef MSG
    return n;
}

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
