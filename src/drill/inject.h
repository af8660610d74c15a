/* inject.h — fault injection for drills (`vigil inject`): makes a node fail
 * the way a real one does — an NVRM Xid record in the driver's own words in
 * the node's kernel log, a GPU the (fake) NVML reports lost, a double-bit ECC
 * error, an InfiniBand port down, a hung NVML, a crashed or frozen node, an
 * AMD GPU's uncorrectable error, retired pages at the threshold, ring timeout,
 * XGMI link down or failed init in the amdgpu driver's words, a wedged NIC
 * driver, a link flap, a burst of link errors, a GPU whose NVLink fabric
 * registration failed — and
 * records every injection with its exact time so that `vigil inject clear`
 * can undo it and `vigil drill` can measure from it.
 *
 * Targets: a lab node (DIR/nodes/NAME/{kmsg,nvml-state,sys}, its processes),
 * the local machine (`--local`: /dev/kmsg, the scheduler's node daemon and
 * job steps), or a remote node reached through the orchestrator (a job step
 * beside the job, orch.h `exec_on`) or `ssh NAME`, which runs
 * `vigil inject … --local` there.  A kind is one struct vg_inj_ops and one
 * line in the table in inject.c. */
#ifndef VG_INJECT_H
#define VG_INJECT_H
#include "orch/orch.h"
#include "util/sbuf.h"
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum vg_inj_kind {
    VG_INJ_XID = 0,
    VG_INJ_GPU_LOST,
    VG_INJ_ECC_DBE,
    VG_INJ_IB_DOWN,
    VG_INJ_NVML_HANG,
    VG_INJ_NODE_CRASH,
    VG_INJ_NODE_FREEZE,
    /* burn-in faults: only active tests see them (lab only: the node's
     * burnin-state file, read by the stand-in tools under tests/standins/) */
    VG_INJ_SDC,
    VG_INJ_GPU_SLOW,
    VG_INJ_NCCL_SLOW,
    VG_INJ_IB_BW_LOW,
    VG_INJ_DCGM_DIAG_FAIL,
    /* AMD Instinct nodes (the lab's --gpu amd): the amdgpu driver's own words
     * in the kernel log and the fake AMD SMI's state */
    VG_INJ_AMD_UE,
    VG_INJ_AMD_BAD_PAGES,
    VG_INJ_AMD_RING_TIMEOUT,
    VG_INJ_AMD_XGMI_DOWN,
    VG_INJ_AMD_INIT_FAIL,
    /* AMD burn-in faults: the lab's AMD stand-ins (rccl-tests' all_reduce_perf,
     * rvs, TransferBench) read them from the node's burnin-state */
    VG_INJ_AMD_RCCL_SLOW,
    VG_INJ_AMD_RVS_FAIL,
    VG_INJ_AMD_XGMI_BW_LOW,
    /* the faults between the GPUs (lab only: the node's verbs-state, its
     * sysfs counters, its fake NVML's fabric state) */
    VG_INJ_NIC_HUNG,
    VG_INJ_LINK_FLAP,
    VG_INJ_IB_ERRORS,
    VG_INJ_FABRIC_DEGRADED,
    VG_INJ_COUNT
};

struct vg_inject_opts;

/* What a kind of fault does: in a lab node, on a real node (NULL: only in a
 * lab, a real port or driver is not faked), and what undoes it beyond
 * restoring the files it saved (NULL: nothing).  Each returns 0 or -1. */
struct vg_inj_ops {
    const char *name;       /* "xid", "gpu-lost", … */
    int code;               /* the XID its record names, -1 none */
    bool takes_code;        /* the XID is given ("xid:79") */
    int (*lab)(const struct vg_inject_opts *o, const char *pci, json_t *undo, struct sbuf *detail);
    int (*local)(const struct vg_inject_opts *o, const char *pci, json_t *undo, struct sbuf *detail);
    int (*undo)(const struct vg_inject_opts *o, const json_t *rec, char *err, size_t errlen);
    const char *gpu;        /* a GPU's fault: its vendor ("nvidia", "amd": a node of that vendor, its GPUs
                             * at vg_inj_gpu_pci or vg_inj_amd_pci); NULL: a node's or the burn-in's */
};
/* The kind's ops; NULL when k is out of range. */
const struct vg_inj_ops *vg_inj_ops(enum vg_inj_kind k);

const char *vg_inj_kind_name(enum vg_inj_kind k);   /* "xid", "gpu-lost", … */
/* "xid:79", "xid" (code then from *code as given), "gpu-lost", "node-crash"…
 * Returns false for an unknown kind or a bad code. */
bool vg_inj_kind_parse(const char *s, enum vg_inj_kind *k, int *code);

/* The PCI address ("0000:18:00.0") of GPU i on an HGX board, the fake NVML's
 * default table; NULL when i is out of 0..7. */
const char *vg_inj_gpu_pci(int gpu);
/* The PCI address of GPU i of an MI300X node (the fake AMD SMI's default
 * table: buses of MI300X GPUs in published logs); NULL when i is out of 0..7. */
const char *vg_inj_amd_pci(int gpu);
/* The amdgpu driver's messages for an AMD fault kind on the GPU at pci (at
 * most 3, each up to n bytes, into msgs); their number, 0 when the kind writes
 * no kernel-log line. */
int vg_amd_messages(enum vg_inj_kind kind, const char *pci, int pid, char msgs[][512], int max);
/* Whether the message table knows this XID's own wording (others get the
 * driver's generic "Ch …" form). */
bool vg_xid_known(int code);
/* The driver's message for XID code on the GPU at pci, e.g.
 * "NVRM: Xid (PCI:0000:18:00): 79, pid=4242, name=python3, GPU has fallen off the bus."
 * gpu is the GPU index some messages name (GSP timeouts).  Returns the length. */
size_t vg_xid_message(int code, const char *pci, int gpu, int pid, char *buf, size_t n);
/* A /dev/kmsg record, "PRIO,SEQ,USEC,-;MSG\n" followed by the driver's
 * SUBSYSTEM/DEVICE dictionary lines when pci is not NULL. */
size_t vg_kmsg_record(int prio, uint64_t seq, uint64_t usec, const char *msg, const char *pci, char *buf,
                      size_t n);

#define VG_VIA_ORCH "orch"   /* through the orchestrator: a job step on the node */

struct vg_inject_opts {
    enum vg_inj_kind kind;
    int code;               /* XID code (kind xid) */
    const char *node;       /* required */
    int gpu;                /* 0..7 */
    const char *lab;        /* lab directory, or NULL for a real node */
    const char *via;        /* real node: VG_VIA_ORCH (default), "ssh" or "local" */
    const char *record;     /* JSON-lines record file; NULL = LAB/injections.jsonl or none (local) */
    const char *root;       /* --local: files (/dev/kmsg) under this root */
    const char *kmsg;       /* the node's kernel log (NULL: /dev/kmsg); a regular file gets the records
                             * as /dev/kmsg reads them back (a log an agent follows with --kmsg) */
    const char *self;       /* the vigil binary to run remotely; NULL = /proc/self/exe */
    struct vg_orch *orch;   /* the orchestrator (via orch; the names of a real node's daemons) */
};

/* Performs the injection and appends its record (with the time it took
 * effect) to the record file.  *rec, when not NULL, gets the record.
 * Returns 0; -1 when it failed (err says why); -2 for bad options. */
int vg_inject(const struct vg_inject_opts *o, json_t **rec, char *err, size_t errlen);

/* Undoes every injection in the record file not yet cleared (of node, when
 * not NULL), newest first: restores NVML state and sysfs files, SIGCONTs
 * frozen processes, restarts a crashed lab node's daemons.  Appends a clear
 * record for each.  *ncleared gets how many.  Returns 0, -1 (err), -2 (a
 * malformed record file: err names its line). */
int vg_inject_clear(const struct vg_inject_opts *o, int *ncleared, char *err, size_t errlen);

/* Parses a record file's text: the injections, each with "cleared" set when a
 * later clear record names it.  Returns a JSON array, or NULL with err naming
 * the line at fault. */
json_t *vg_inject_parse_records(const char *text, size_t len, char *err, size_t errlen);

/* The lab's record file, malloc'd ("DIR/injections.jsonl"). */
char *vg_inject_lab_record(const char *lab);

#endif
