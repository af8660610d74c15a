/* inject.c — performing and undoing injections (see inject.h): writes to a
 * lab node's simulated kernel log, NVML state and sysfs, or to the local
 * /dev/kmsg; signals a node's scheduler daemon, job steps and tasks (each PID
 * checked); runs itself on a remote node through the orchestrator or ssh;
 * appends one JSON line per injection and per clear to the record file.
 * Each kind of fault is one struct of function pointers in the table at the
 * end of this file (apply in a lab, apply on a real node, undo). */
#include "drill/inject.h"
#include "lab/lab.h"
#include "orch/orch.h"
#include "util/jsonutil.h"
#include "util/log.h"
#include "util/proc.h"
#include "util/rootfs.h"
#include "util/sbuf.h"
#include "util/spawn.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define IB_PORT "/sys/class/infiniband/mlx5_0/ports/1"
#define NVML_HANG_CALLS "nvmlDeviceGetTotalEccErrors,nvmlDeviceGetTemperature,nvmlDeviceGetRemappedRows"

static int fail(char *err, size_t n, int rc, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int fail(char *err, size_t n, int rc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, n, fmt, ap);
    va_end(ap);
    return rc;
}

static bool valid_node(const char *s)
{
    if (!s || !*s || strlen(s) >= 64 || s[0] == '.' || s[0] == '-') return false;
    for (const char *p = s; *p; p++)
        if (!isalnum((unsigned char)*p) && !strchr("-_.", *p)) return false;
    return true;
}

char *vg_inject_lab_record(const char *lab) { return vg_root_path(lab, "/injections.jsonl"); }

static char *node_path(const char *lab, const char *node, const char *rel)
{
    struct sbuf b = SBUF_INIT;
    sbuf_printf(&b, "%s/nodes/%s%s", lab, node, rel);
    return sbuf_take(&b);
}

/* ---- files --------------------------------------------------------------- */

static int append_text(const char *path, const char *text, size_t len)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return -1;
    ssize_t w = write(fd, text, len);
    int rc = w == (ssize_t)len ? 0 : -1;
    if (close(fd)) rc = -1;
    return rc;
}

/* Writes path atomically (temp file + rename); text NULL removes it. */
static int replace_file(const char *path, const char *text)
{
    if (!text) return unlink(path) && errno != ENOENT ? -1 : 0;
    struct sbuf tmp = SBUF_INIT;
    sbuf_printf(&tmp, "%s.inject-tmp", path);
    int rc = -1, fd = open(tmp.s, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0) {
        size_t len = strlen(text);
        rc = write(fd, text, len) == (ssize_t)len ? 0 : -1;
        if (close(fd)) rc = -1;
        if (!rc) rc = rename(tmp.s, path);
        if (rc) unlink(tmp.s);
    }
    sbuf_free(&tmp);
    return rc;
}

/* mkdir -p of the directory part of path. */
static void make_parents(const char *path)
{
    char *d = vg_xstrdup(path);
    for (char *p = d + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            mkdir(d, 0755);
            *p = '/';
        }
    free(d);
}

/* The whole file, or NULL when it does not exist. */
static char *read_or_null(const char *path)
{
    char *text;
    if (vg_read_file(NULL, path, 1 << 20, &text, NULL)) return NULL;
    return text;
}

/* The next /dev/kmsg sequence number of a lab node's log: one more than the
 * last record's. */
static uint64_t next_seq(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 1;
    char buf[8192];
    off_t end = lseek(fd, 0, SEEK_END), from = end > (off_t)sizeof buf - 1 ? end - (off_t)sizeof buf + 1 : 0;
    ssize_t r = pread(fd, buf, sizeof buf - 1, from);
    close(fd);
    uint64_t seq = 0;
    if (r <= 0) return 1;
    buf[r] = 0;
    for (char *line = buf; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
        unsigned prio;
        unsigned long long s;
        if (sscanf(line, "%u,%llu,", &prio, &s) == 2 && s >= seq) seq = s;
    }
    return seq + 1;
}

/* ---- kernel log ---------------------------------------------------------- */

#define MAXMSG 3

/* The messages a fault writes to the kernel log (NULL-free, count in *n). */
static void fault_messages(const struct vg_inject_opts *o, const char *pci, char msgs[MAXMSG][512], int *n)
{
    int pid = 1000 + (int)(vg_now_ms() % 60000);
    *n = 0;
    if (!strcmp(vg_inj_ops(o->kind)->gpu ? vg_inj_ops(o->kind)->gpu : "", "amd")) {
        *n = vg_amd_messages(o->kind, pci, pid, msgs, MAXMSG);
        return;
    }
    switch (o->kind) {
    case VG_INJ_XID: vg_xid_message(o->code, pci, o->gpu, pid, msgs[(*n)++], 512); break;
    case VG_INJ_ECC_DBE: vg_xid_message(48, pci, o->gpu, pid, msgs[(*n)++], 512); break;
    case VG_INJ_GPU_LOST:
        snprintf(msgs[(*n)++], 512, "NVRM: GPU %s: GPU has fallen off the bus.", pci);
        vg_xid_message(79, pci, o->gpu, pid, msgs[(*n)++], 512);
        break;
    default: break;
    }
}

/* Appends the fault's records to a file in the format /dev/kmsg reads back
 * ("PRIO,SEQ,USEC,-;MSG" and the driver's dictionary lines): a lab node's
 * log, or a node's log file that is not the character device. */
static int write_kmsg_file(const struct vg_inject_opts *o, const char *path, const char *pci, struct sbuf *detail)
{
    char msgs[MAXMSG][512], rec[1200];
    int n;
    fault_messages(o, pci, msgs, &n);
    int rc = 0;
    for (int i = 0; i < n && !rc; i++) {
        size_t len = vg_kmsg_record(3, next_seq(path), (uint64_t)vg_mono_ms() * 1000, msgs[i], pci, rec,
                                    sizeof rec);
        rc = append_text(path, rec, len);
        sbuf_printf(detail, "%s%s", i ? " | " : "", msgs[i]);
    }
    return rc;
}

static int write_lab_kmsg(const struct vg_inject_opts *o, const char *pci, struct sbuf *detail)
{
    char *path = node_path(o->lab, o->node, "/kmsg");
    int rc = write_kmsg_file(o, path, pci, detail);
    free(path);
    return rc;
}

/* /dev/kmsg takes "<prio>message" writes, one record each. */
static int write_local_kmsg(const struct vg_inject_opts *o, const char *pci, struct sbuf *detail)
{
    char msgs[MAXMSG][512], rec[600];
    int n;
    char *path = vg_root_path(o->root, o->kmsg ? o->kmsg : "/dev/kmsg");
    struct stat st;
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {   /* a log file the agent follows (--kmsg) */
        int rc = write_kmsg_file(o, path, pci, detail);
        free(path);
        return rc;
    }
    fault_messages(o, pci, msgs, &n);
    int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
    free(path);
    if (fd < 0) return -1;
    int rc = 0;
    for (int i = 0; i < n && !rc; i++) {
        int len = snprintf(rec, sizeof rec, "<3>%s\n", msgs[i]);
        rc = write(fd, rec, (size_t)len) == len ? 0 : -1;
        sbuf_printf(detail, "%s%s", i ? " | " : "", msgs[i]);
    }
    close(fd);
    return rc;
}

/* ---- NVML state and sysfs (lab) ------------------------------------------ */

/* Replaces (or adds) the "key=value" lines of a node's state file (rel:
 * "/nvml-state", "/burnin-state"); the previous text goes into undo[key]. */
static int set_state(const struct vg_inject_opts *o, const char *rel, const char *key, const char *const *kv,
                     size_t nkv, json_t *undo)
{
    char *path = node_path(o->lab, o->node, rel);
    char *prev = read_or_null(path);
    json_object_set_new(undo, key, prev ? json_string(prev) : json_null());
    struct sbuf out = SBUF_INIT;
    char *copy = vg_xstrdup(prev ? prev : ""), *save = NULL;
    for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        bool replaced = false;
        for (size_t i = 0; i < nkv && !replaced; i++) {
            size_t kl = strcspn(kv[i], "=");
            replaced = !strncmp(line, kv[i], kl) && line[kl] == '=';
        }
        if (!replaced) sbuf_printf(&out, "%s\n", line);
    }
    for (size_t i = 0; i < nkv; i++) sbuf_printf(&out, "%s\n", kv[i]);
    int rc = replace_file(path, out.s ? out.s : "");
    free(copy);
    free(prev);
    sbuf_free(&out);
    free(path);
    return rc;
}

/* The node's fake NVML state; undo gets "nvml_state". */
static int set_nvml(const struct vg_inject_opts *o, const char *const *kv, size_t nkv, json_t *undo)
{
    return set_state(o, "/nvml-state", "nvml_state", kv, nkv, undo);
}

/* The node's fake AMD SMI state; undo gets "amdsmi_state". */
static int set_amdsmi(const struct vg_inject_opts *o, const char *const *kv, size_t nkv, json_t *undo)
{
    return set_state(o, "/amdsmi-state", "amdsmi_state", kv, nkv, undo);
}

/* A burn-in fault: one "kind=value" line in the node's burnin-state, which
 * the stand-in tools read (tests/standins/README.md); undo gets
 * "burnin_state". */
static int set_burnin(const struct vg_inject_opts *o, json_t *undo, struct sbuf *detail)
{
    char kv[64];
    switch (o->kind) {
    case VG_INJ_SDC:
    case VG_INJ_GPU_SLOW: snprintf(kv, sizeof kv, "%s=%d", vg_inj_kind_name(o->kind), o->gpu); break;
    case VG_INJ_NCCL_SLOW:
    case VG_INJ_IB_BW_LOW: snprintf(kv, sizeof kv, "%s=0.5", vg_inj_kind_name(o->kind)); break;
    /* AMD's: the stand-ins' keys (rccl-tests is all_reduce_perf; RVS's GPU stress test fails) */
    case VG_INJ_AMD_RCCL_SLOW: snprintf(kv, sizeof kv, "nccl-slow=0.5"); break;
    case VG_INJ_AMD_RVS_FAIL: snprintf(kv, sizeof kv, "rvs-fail=gst"); break;
    case VG_INJ_AMD_XGMI_BW_LOW: snprintf(kv, sizeof kv, "xgmi-bw-low=0.5"); break;
    default: snprintf(kv, sizeof kv, "%s=1", vg_inj_kind_name(o->kind)); break;
    }
    const char *kvs[] = { kv };
    sbuf_printf(detail, "burnin-state: %s", kv);
    return set_state(o, "/burnin-state", "burnin_state", kvs, 1, undo);
}

/* Appends a line to the fake NVML's events file (delivered once by
 * nvmlEventSetWait). */
static int nvml_event(const struct vg_inject_opts *o, const char *line)
{
    char *path = node_path(o->lab, o->node, "/nvml-state.events");
    int rc = append_text(path, line, strlen(line));
    free(path);
    return rc;
}

static int set_ib(const struct vg_inject_opts *o, json_t *undo)
{
    static const char *const leaf[2] = { "state", "phys_state" };
    static const char *const down[2] = { "1: DOWN\n", "3: Disabled\n" };
    json_t *prev = json_object();
    int rc = 0;
    for (int i = 0; i < 2 && !rc; i++) {
        char rel[128];
        snprintf(rel, sizeof rel, IB_PORT "/%s", leaf[i]);
        char *path = node_path(o->lab, o->node, rel);
        make_parents(path);
        char *old = read_or_null(path);
        json_object_set_new(prev, leaf[i], old ? json_string(old) : json_null());
        rc = replace_file(path, down[i]);
        free(old);
        free(path);
    }
    json_object_set_new(undo, "sysfs", prev);
    return rc;
}

/* Adds add to a counter of the lab node's InfiniBand port (what a flap or a
 * burst of errors leaves there); detail gets "link_downed 0 -> 1". */
static int bump_counter(const struct vg_inject_opts *o, const char *counter, long long add, struct sbuf *detail)
{
    char rel[160];
    snprintf(rel, sizeof rel, IB_PORT "/counters/%s", counter);
    char *path = node_path(o->lab, o->node, rel), *old = read_or_null(path);
    long long v = old ? atoll(old) : 0;
    char text[32];
    snprintf(text, sizeof text, "%lld\n", v + add);
    int rc = replace_file(path, text);
    sbuf_printf(detail, "mlx5_0 port 1 %s %lld -> %lld", counter, v, v + add);
    free(old);
    free(path);
    return rc;
}

/* ---- processes ----------------------------------------------------------- */

static bool has(const pid_t *set, size_t n, pid_t p)
{
    for (size_t i = 0; i < n; i++)
        if (set[i] == p) return true;
    return false;
}

static bool same_uts(pid_t pid, const char *ns)
{
    char path[64], link[64];
    snprintf(path, sizeof path, "/proc/%d/ns/uts", (int)pid);
    return vg_read_link(NULL, path, link, sizeof link) == 0 && !strcmp(link, ns);
}

/* The processes of a node: in the lab, those in its node daemon's UTS
 * namespace and those tagged VIGIL_NODE=node of that lab; on a real node,
 * the orchestrator's node daemon and job step processes.  Then all their
 * descendants; never the caller or its ancestors. */
static size_t node_procs(const struct vg_inject_opts *o, pid_t **out)
{
    *out = NULL;
    size_t n = 0;
    char ns[64] = "", env_node[96], env_tag[600];
    snprintf(env_node, sizeof env_node, "VIGIL_NODE=%s", o->node);
    if (o->lab) {
        snprintf(env_tag, sizeof env_tag, "%s=%s", VG_LAB_TAG, o->lab);
        pid_t d = vg_lab_node_daemon(o->lab, o->node);
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/ns/uts", (int)d);
        if (d <= 0 || vg_read_link(NULL, path, ns, sizeof ns)) ns[0] = 0;
    }
    const struct vg_orch_ops *sched = o->orch ? o->orch->ops : vg_orch_find(NULL);
    pid_t *all;
    int na = vg_proc_list(&all);
    if (na < 0) return 0;
    char self_ns[64] = "";
    vg_read_link(NULL, "/proc/self/ns/uts", self_ns, sizeof self_ns);
    for (int i = 0; i < na; i++) {
        pid_t p = all[i];
        if (!vg_proc_alive(p)) continue;
        bool mine;
        if (o->lab) {
            /* the host's own namespace is never a node's */
            mine = (ns[0] && strcmp(ns, self_ns) && same_uts(p, ns)) ||
                   (vg_proc_has_env(p, env_node) && vg_proc_has_env(p, env_tag));
        }
        else {
            char comm[32] = "";
            vg_proc_comm(p, comm, sizeof comm);
            mine = false;
            for (size_t k = 0; sched->node_procs && sched->node_procs[k] && !mine; k++)
                mine = !strcmp(comm, sched->node_procs[k]);
        }
        if (mine) {
            *out = vg_xrealloc(*out, (n + 1) * sizeof **out);
            (*out)[n++] = p;
        }
    }
    for (bool grew = n > 0; grew;) {
        grew = false;
        for (int i = 0; i < na; i++)
            if (!has(*out, n, all[i]) && vg_proc_alive(all[i]) && has(*out, n, vg_proc_ppid(all[i]))) {
                *out = vg_xrealloc(*out, (n + 1) * sizeof **out);
                (*out)[n++] = all[i];
                grew = true;
            }
    }
    free(all);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!vg_proc_is_self_or_ancestor((*out)[i])) (*out)[k++] = (*out)[i];
    return k;
}

/* Sends sig to the node's processes; undo gets [{pid, comm}…]. */
static int signal_node(const struct vg_inject_opts *o, int sig, json_t *undo, struct sbuf *detail)
{
    pid_t *p;
    size_t n = node_procs(o, &p);
    json_t *list = json_array();
    size_t sent = 0;
    for (size_t i = 0; i < n; i++) {
        char comm[32] = "?";
        vg_proc_comm(p[i], comm, sizeof comm);
        if (kill(p[i], sig) == 0) {
            sent++;
            json_array_append_new(list, json_pack("{s:i,s:s}", "pid", (int)p[i], "comm", comm));
        }
    }
    free(p);
    json_object_set_new(undo, "pids", list);
    sbuf_printf(detail, "%s to %zu processes", sig == SIGKILL ? "SIGKILL" : "SIGSTOP", sent);
    return sent ? 0 : -1;
}

/* ---- remote -------------------------------------------------------------- */

/* Runs `vigil inject SUBCMD … --local` on the node (ssh, or through the
 * orchestrator with the node's kernel log mounted); *at, when not NULL,
 * gets the time its record says the fault took effect (left as is when it
 * printed none), detail what it wrote. */
static int run_remote(const struct vg_inject_opts *o, const char *subcmd, int64_t *at, struct sbuf *detail, char *err,
                      size_t errlen)
{
    char self[512] = "vigil", gpu[16], code[16];
    if (o->self) vg_strlcpy(self, o->self, sizeof self);
    else if (vg_read_link(NULL, "/proc/self/exe", self, sizeof self)) vg_strlcpy(self, "vigil", sizeof self);
    snprintf(gpu, sizeof gpu, "%d", o->gpu);
    snprintf(code, sizeof code, "%d", o->code);
    const char *argv[24];
    int a = 0;
    bool ssh = o->via && !strcmp(o->via, "ssh");
    if (ssh) argv[a++] = "ssh", argv[a++] = "-o", argv[a++] = "BatchMode=yes", argv[a++] = o->node;
    const char **cmd = argv + a;
    argv[a++] = self, argv[a++] = "inject", argv[a++] = subcmd;
    if (!strcmp(subcmd, "xid")) argv[a++] = code;
    argv[a++] = "--node", argv[a++] = o->node, argv[a++] = "--gpu", argv[a++] = gpu, argv[a++] = "--local";
    if (o->kmsg) argv[a++] = "--kmsg", argv[a++] = o->kmsg;
    if (at) argv[a++] = "--json";
    argv[a] = NULL;
    const char *host_paths[] = { o->kmsg ? o->kmsg : "/dev/kmsg", NULL };
    struct vg_spawn_result r;
    int rc;
    if (ssh) {
        vg_spawn(argv, NULL, NULL, 30000, &r);
        rc = r.status == 0 && !r.timed_out ? 0 : -1;
        if (rc) {
            char *line = vg_argv_str(argv);
            snprintf(err, errlen, "%s: %s", line, r.timed_out ? "timed out" : *vg_trim(r.err) ? vg_trim(r.err) : "failed");
            free(line);
        }
    } else if (!o->orch) {
        memset(&r, 0, sizeof r);
        rc = fail(err, errlen, -1, "no orchestrator to reach node %s through", o->node);
    } else {
        rc = o->orch->ops->exec_on(o->orch, o->node, cmd, host_paths, 60000, &r);
        if (rc) snprintf(err, errlen, "%s", o->orch->err);
    }
    /* the node's own record says when the fault took effect there */
    json_t *remote = !rc && at && r.out ? json_loads(r.out, JSON_DISABLE_EOF_CHECK, NULL) : NULL;
    int64_t t = remote ? vg_json_get_time(remote, "time") : 0;
    if (t > 0) *at = t;
    if (detail && vg_json_str(remote, "detail", NULL)) sbuf_puts(detail, vg_json_str(remote, "detail", ""));
    json_decref(remote);
    char *nl = strchr(err, '\n');
    if (nl) *nl = 0;
    vg_spawn_result_free(&r);
    return rc;
}

/* ---- inject -------------------------------------------------------------- */

static int check_opts(const struct vg_inject_opts *o, char *err, size_t errlen)
{
    if (!valid_node(o->node)) return fail(err, errlen, -2, "--node: '%s' is not a node name", o->node ? o->node : "");
    if (!vg_inj_gpu_pci(o->gpu)) return fail(err, errlen, -2, "--gpu: %d is not in 0..7", o->gpu);
    const struct vg_inj_ops *k = vg_inj_ops(o->kind);
    if (!k) return fail(err, errlen, -2, "unknown injection kind %d", (int)o->kind);
    if (k->takes_code && (o->code < 1 || o->code > 999))
        return fail(err, errlen, -2, "xid: code %d is not in 1..999", o->code);
    if (o->lab) {
        if (!vg_lab_is_lab(o->lab)) return fail(err, errlen, -2, "--dir: %s is not a vigil lab", o->lab);
        char *p = node_path(o->lab, o->node, "");
        bool ok = access(p, F_OK) == 0;
        free(p);
        if (!ok) return fail(err, errlen, -2, "--node: the lab in %s has no node '%s'", o->lab, o->node);
        /* a GPU's fault hits a GPU of its vendor (burn-in and whole-node faults any node) */
        const char *has = vg_lab_node_gpu(o->lab, o->node);
        if (k->gpu && strcmp(k->gpu, has))
            return fail(err, errlen, -2, "%s: node %s's GPUs are %s's, not %s's%s", k->name, o->node, has, k->gpu,
                        !strcmp(has, "amd") ? " (amd-ue, amd-bad-pages, amd-ring-timeout, amd-xgmi-down, amd-init-fail, "
                                                       "amd-rccl-slow, amd-rvs-fail, amd-xgmi-bw-low)"
                                            : "");
        return 0;
    }
    if (o->kmsg && o->kmsg[0] != '/') return fail(err, errlen, -2, "--kmsg: '%s' is not an absolute path", o->kmsg);
    if (o->via && strcmp(o->via, VG_VIA_ORCH) && strcmp(o->via, "ssh") && strcmp(o->via, "local"))
        return fail(err, errlen, -2, "--via: '%s' is not orch, ssh or local", o->via);
    if (!k->local)
        return fail(err, errlen, -2, "%s: only in the lab (--lab): a real port or driver is not faked", k->name);
    return 0;
}

static bool is_local(const struct vg_inject_opts *o) { return !o->lab && o->via && !strcmp(o->via, "local"); }

/* ---- the kinds ----------------------------------------------------------- */

static int xid_lab(const struct vg_inject_opts *o, const char *pci, json_t *undo, struct sbuf *detail)
{
    (void)undo;
    return write_lab_kmsg(o, pci, detail);
}

static int gpu_lost_lab(const struct vg_inject_opts *o, const char *pci, json_t *undo, struct sbuf *detail)
{
    char k1[64];
    snprintf(k1, sizeof k1, "gpu%d.lost=1", o->gpu);
    const char *kv[] = { k1 };
    if (set_nvml(o, kv, 1, undo)) return -1;
    return write_lab_kmsg(o, pci, detail);
}

static int ecc_dbe_lab(const struct vg_inject_opts *o, const char *pci, json_t *undo, struct sbuf *detail)
{
    char k1[64], k2[64], k3[160];
    snprintf(k1, sizeof k1, "gpu%d.ecc_dbe_volatile=1", o->gpu);
    snprintf(k2, sizeof k2, "gpu%d.ecc_dbe_aggregate=1", o->gpu);
    snprintf(k3, sizeof k3, "event=48 gpu=%d type=dbe\n", o->gpu);
    const char *kv[] = { k1, k2 };
    if (set_nvml(o, kv, 2, undo) || nvml_event(o, k3)) return -1;
    return write_lab_kmsg(o, pci, detail);
}

static int nvml_hang_lab(const struct vg_inject_opts *o, const char *pci, json_t *undo, struct sbuf *detail)
{
    (void)pci;
    char k[160];
    snprintf(k, sizeof k, "gpu%d.hang=" NVML_HANG_CALLS, o->gpu);
    const char *kv[] = { k };
    sbuf_printf(detail, "%s", k);
    return set_nvml(o, kv, 1, undo);
}

/* An AMD fault in the lab: what the fake AMD SMI then reports (the counters
 * vigil polls), and the driver's lines in the node's kernel log. */
static int amd_lab(const struct vg_inject_opts *o, const char *pci, json_t *undo, struct sbuf *detail)
{
    char kv[2][64];
    size_t n = 0;
    switch (o->kind) {
    case VG_INJ_AMD_UE: snprintf(kv[n++], 64, "gpu%d.ue.athub=1", o->gpu); break;
    case VG_INJ_AMD_BAD_PAGES:
        snprintf(kv[n++], 64, "gpu%d.bad_reserved=8", o->gpu);
        snprintf(kv[n++], 64, "gpu%d.bad_page_threshold=8", o->gpu);
        break;
    case VG_INJ_AMD_RING_TIMEOUT: snprintf(kv[n++], 64, "reset=%lld", (long long)vg_now_ms()); break;   /* handles go stale */
    case VG_INJ_AMD_XGMI_DOWN: snprintf(kv[n++], 64, "gpu%d.xgmi_down=3", o->gpu); break;
    case VG_INJ_AMD_INIT_FAIL: snprintf(kv[n++], 64, "gpu%d.absent=1", o->gpu); break;
    default: return -1;
    }
    const char *kvs[2] = { kv[0], kv[1] };
    if (set_amdsmi(o, kvs, n, undo)) return -1;
    if (o->kind == VG_INJ_AMD_XGMI_DOWN) {
        sbuf_printf(detail, "amdsmi-state: %s (no kernel-log line: the link status tells)", kv[0]);
        return 0;
    }
    return write_lab_kmsg(o, pci, detail);
}

static int ib_down_lab(const struct vg_inject_opts *o, const char *pci, json_t *undo, struct sbuf *detail)
{
    (void)pci;
    sbuf_puts(detail, "mlx5_0 port 1: 1: DOWN, 3: Disabled");
    return set_ib(o, undo);
}

/* The NIC's driver wedged: the fake verbs library's port query never returns. */
static int nic_hung_lab(const struct vg_inject_opts *o, const char *pci, json_t *undo, struct sbuf *detail)
{
    (void)pci;
    const char *kv[] = { "mlx5_0.hang=query" };
    sbuf_puts(detail, "verbs-state: mlx5_0.hang=query");
    return set_state(o, "/verbs-state", "verbs_state", kv, 1, undo);
}

/* The link went down and came back: link_downed one up (counters never go
 * back: nothing to undo). */
static int link_flap_lab(const struct vg_inject_opts *o, const char *pci, json_t *undo, struct sbuf *detail)
{
    (void)pci, (void)undo;
    return bump_counter(o, "link_downed", 1, detail);
}

/* A burst of physical errors: symbol_error 100,000 up in one period. */
static int ib_errors_lab(const struct vg_inject_opts *o, const char *pci, json_t *undo, struct sbuf *detail)
{
    (void)pci, (void)undo;
    return bump_counter(o, "symbol_error", 100000, detail);
}

/* The GPU's NVLink fabric registration finished with an error (NVML_ERROR_UNKNOWN). */
static int fabric_degraded_lab(const struct vg_inject_opts *o, const char *pci, json_t *undo, struct sbuf *detail)
{
    (void)pci;
    char k1[64], k2[64];
    snprintf(k1, sizeof k1, "gpu%d.fabric=completed", o->gpu);
    snprintf(k2, sizeof k2, "gpu%d.fabric_status=999", o->gpu);
    const char *kv[] = { k1, k2 };
    sbuf_printf(detail, "nvml-state: %s %s", k1, k2);
    return set_nvml(o, kv, 2, undo);
}

static int crash(const struct vg_inject_opts *o, const char *pci, json_t *undo, struct sbuf *detail)
{
    (void)pci;
    return signal_node(o, SIGKILL, undo, detail);
}

static int freeze(const struct vg_inject_opts *o, const char *pci, json_t *undo, struct sbuf *detail)
{
    (void)pci;
    return signal_node(o, SIGSTOP, undo, detail);
}

static int burnin_lab(const struct vg_inject_opts *o, const char *pci, json_t *undo, struct sbuf *detail)
{
    (void)pci;
    return set_burnin(o, undo, detail);
}

static int kmsg_local(const struct vg_inject_opts *o, const char *pci, json_t *undo, struct sbuf *detail)
{
    (void)undo;
    return write_local_kmsg(o, pci, detail);
}

static int freeze_undo(const struct vg_inject_opts *o, const json_t *r, char *err, size_t errlen)
{
    size_t i;
    const json_t *e;
    json_array_foreach(json_object_get(json_object_get(r, "undo"), "pids"), i, e) {
        pid_t pid = (pid_t)vg_json_int(e, "pid", 0);
        char comm[32] = "";
        if (pid > 1 && vg_proc_comm(pid, comm, sizeof comm) == 0 && !strcmp(comm, vg_json_str(e, "comm", "")))
            kill(pid, SIGCONT);
    }
    /* on a real node reached remotely, its own `clear --local` resumes the rest */
    if (vg_json_str(r, "lab", NULL) || !strcmp(vg_json_str(r, "target", ""), "local")) return 0;
    struct vg_inject_opts ro = *o;
    ro.node = vg_json_str(r, "node", "");
    return run_remote(&ro, "clear", NULL, NULL, err, errlen);
}

static int crash_undo(const struct vg_inject_opts *o, const json_t *r, char *err, size_t errlen)
{
    (void)o;
    const char *lab = vg_json_str(r, "lab", NULL), *node = vg_json_str(r, "node", "");
    if (lab) return vg_lab_node_start(lab, node, err, errlen);
    vg_warn("inject clear: %s crashed outside a lab: restart its node daemon by hand", node);
    return 0;
}

/* One line per kind, in the order of enum vg_inj_kind.  code: the XID the
 * record names (-1: none; takes_code: the one given). */
static const struct vg_inj_ops kinds[VG_INJ_COUNT] = {
    [VG_INJ_XID] = { "xid", -1, true, xid_lab, kmsg_local, NULL, "nvidia" },
    [VG_INJ_GPU_LOST] = { "gpu-lost", 79, false, gpu_lost_lab, kmsg_local, NULL, "nvidia" },
    [VG_INJ_ECC_DBE] = { "ecc-dbe", 48, false, ecc_dbe_lab, kmsg_local, NULL, "nvidia" },
    [VG_INJ_IB_DOWN] = { "ib-down", -1, false, ib_down_lab, NULL, NULL },
    [VG_INJ_NVML_HANG] = { "nvml-hang", -1, false, nvml_hang_lab, NULL, NULL, "nvidia" },
    [VG_INJ_NODE_CRASH] = { "node-crash", -1, false, crash, crash, crash_undo },
    [VG_INJ_NODE_FREEZE] = { "node-freeze", -1, false, freeze, freeze, freeze_undo },
    /* burn-in faults: only the active tests of `vigil burnin` see them */
    [VG_INJ_SDC] = { "sdc", -1, false, burnin_lab, NULL, NULL },
    [VG_INJ_GPU_SLOW] = { "gpu-slow", -1, false, burnin_lab, NULL, NULL },
    [VG_INJ_NCCL_SLOW] = { "nccl-slow", -1, false, burnin_lab, NULL, NULL },
    [VG_INJ_IB_BW_LOW] = { "ib-bw-low", -1, false, burnin_lab, NULL, NULL },
    [VG_INJ_DCGM_DIAG_FAIL] = { "dcgm-diag-fail", -1, false, burnin_lab, NULL, NULL },
    /* AMD GPUs: the kernel-log ones also on a real node (its /dev/kmsg) */
    [VG_INJ_AMD_UE] = { "amd-ue", -1, false, amd_lab, kmsg_local, NULL, "amd" },
    [VG_INJ_AMD_BAD_PAGES] = { "amd-bad-pages", -1, false, amd_lab, kmsg_local, NULL, "amd" },
    [VG_INJ_AMD_RING_TIMEOUT] = { "amd-ring-timeout", -1, false, amd_lab, kmsg_local, NULL, "amd" },
    [VG_INJ_AMD_XGMI_DOWN] = { "amd-xgmi-down", -1, false, amd_lab, NULL, NULL, "amd" },
    [VG_INJ_AMD_INIT_FAIL] = { "amd-init-fail", -1, false, amd_lab, kmsg_local, NULL, "amd" },
    [VG_INJ_AMD_RCCL_SLOW] = { "amd-rccl-slow", -1, false, burnin_lab, NULL, NULL, "amd" },
    [VG_INJ_AMD_RVS_FAIL] = { "amd-rvs-fail", -1, false, burnin_lab, NULL, NULL, "amd" },
    [VG_INJ_AMD_XGMI_BW_LOW] = { "amd-xgmi-bw-low", -1, false, burnin_lab, NULL, NULL, "amd" },
    /* the faults between the GPUs: a real NIC or fabric is not faked */
    [VG_INJ_NIC_HUNG] = { "nic-hung", -1, false, nic_hung_lab, NULL, NULL },
    [VG_INJ_LINK_FLAP] = { "link-flap", -1, false, link_flap_lab, NULL, NULL },
    [VG_INJ_IB_ERRORS] = { "ib-errors", -1, false, ib_errors_lab, NULL, NULL },
    [VG_INJ_FABRIC_DEGRADED] = { "fabric-degraded", -1, false, fabric_degraded_lab, NULL, NULL, "nvidia" },
};

const struct vg_inj_ops *vg_inj_ops(enum vg_inj_kind k)
{
    return (int)k >= 0 && k < VG_INJ_COUNT && kinds[k].name ? &kinds[k] : NULL;
}

static int append_record(const char *path, json_t *rec)
{
    char *line = json_dumps(rec, JSON_COMPACT | JSON_SORT_KEYS);
    if (!line) return -1;
    size_t len = strlen(line);
    line = vg_xrealloc(line, len + 2);
    line[len] = '\n';
    line[len + 1] = 0;
    int rc = append_text(path, line, len + 1);
    free(line);
    return rc;
}

static char *record_path(const struct vg_inject_opts *o)
{
    if (o->record) return vg_xstrdup(o->record);
    return o->lab ? vg_inject_lab_record(o->lab) : NULL;
}

int vg_inject(const struct vg_inject_opts *o, json_t **rec, char *err, size_t errlen)
{
    if (rec) *rec = NULL;
    err[0] = 0;
    int rc = check_opts(o, err, errlen);
    if (rc) return rc;
    const struct vg_inj_ops *k = vg_inj_ops(o->kind);
    const char *pci = k->gpu && !strcmp(k->gpu, "amd") ? vg_inj_amd_pci(o->gpu) : vg_inj_gpu_pci(o->gpu);
    json_t *undo = json_object();
    struct sbuf detail = SBUF_INIT;
    const char *target = o->lab ? "lab" : o->via ? o->via : VG_VIA_ORCH;
    int64_t at = 0;
    if (o->lab) rc = k->lab(o, pci, undo, &detail);
    else if (is_local(o)) rc = k->local(o, pci, undo, &detail);
    else rc = run_remote(o, k->name, &at, &detail, err, errlen);
    if (!at) at = vg_now_ms();
    if (rc) {
        if (!err[0])
            snprintf(err, errlen, "%s on %s: %s", vg_inj_kind_name(o->kind), o->node,
                     errno ? strerror(errno) : "no process of that node was found");
        json_decref(undo);
        sbuf_free(&detail);
        return -1;
    }
    char id[48];
    snprintf(id, sizeof id, "%s-%lld-%d", o->node, (long long)at, (int)getpid());
    json_t *r = json_object();
    json_object_set_new(r, "id", json_string(id));
    json_object_set_new(r, "time", vg_json_time(at));
    json_object_set_new(r, "kind", json_string(k->name));
    json_object_set_new(r, "code", k->takes_code ? json_integer(o->code) : k->code >= 0 ? json_integer(k->code)
                                                                                        : json_null());
    json_object_set_new(r, "node", json_string(o->node));
    json_object_set_new(r, "gpu", json_integer(o->gpu));
    json_object_set_new(r, "pci", json_string(pci));
    json_object_set_new(r, "target", json_string(target));
    vg_json_set_str(r, "lab", o->lab);
    vg_json_set_str(r, "detail", detail.s);
    json_object_set_new(r, "undo", undo);
    sbuf_free(&detail);
    char *path = record_path(o);
    if (path && append_record(path, r)) {
        snprintf(err, errlen, "%s: %s (the fault was injected)", path, strerror(errno));
        rc = -1;
    }
    free(path);
    if (rec && !rc) *rec = r;
    else json_decref(r);
    return rc;
}

/* ---- records and clear --------------------------------------------------- */

json_t *vg_inject_parse_records(const char *text, size_t len, char *err, size_t errlen)
{
    json_t *list = json_array();
    size_t lineno = 0;
    for (const char *p = text, *end = text + len; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
        lineno++;
        json_error_t je;
        json_t *j = l ? json_loadb(p, l, 0, &je) : NULL;
        p += l + (nl ? 1 : 0);
        if (!l) continue;
        const char *why = NULL;
        if (!j || !json_is_object(j)) why = "not a JSON object";
        else if (json_is_string(json_object_get(j, "clear"))) {
            const char *id = json_string_value(json_object_get(j, "clear"));
            size_t i;
            json_t *e;
            json_array_foreach(list, i, e) if (!strcmp(vg_json_str(e, "id", ""), id))
                json_object_set_new(e, "cleared", json_true());
        }
        else if (!json_is_string(json_object_get(j, "id"))) why = "field 'id' missing";
        else if (!vg_json_get_time(j, "time")) why = "field 'time' missing or not RFC 3339";
        else if (!valid_node(vg_json_str(j, "node", ""))) why = "field 'node' missing or invalid";
        else {
            enum vg_inj_kind k;
            int code = 0;
            if (!vg_inj_kind_parse(vg_json_str(j, "kind", ""), &k, &code)) why = "field 'kind' unknown";
            else if (!json_is_object(json_object_get(j, "undo"))) why = "field 'undo' missing";
            else {
                json_object_set_new(j, "cleared", json_false());
                json_array_append(list, j);
            }
        }
        json_decref(j);
        if (why) {
            snprintf(err, errlen, "line %zu: %s", lineno, why);
            json_decref(list);
            return NULL;
        }
    }
    return list;
}

/* Restores the files an injection saved (NVML state, sysfs), then runs the
 * kind's own undo. */
static int undo_one(const struct vg_inject_opts *o, const json_t *r, char *err, size_t errlen)
{
    const char *node = vg_json_str(r, "node", ""), *lab = vg_json_str(r, "lab", NULL);
    const json_t *undo = json_object_get(r, "undo");
    enum vg_inj_kind kind;
    int code = 0, rc = 0;
    if (lab && !vg_lab_is_lab(lab)) return 0;   /* the lab is gone: nothing left to undo */
    static const char *const saved[][2] = { { "nvml_state", "/nvml-state" }, { "burnin_state", "/burnin-state" },
                                            { "amdsmi_state", "/amdsmi-state" }, { "verbs_state", "/verbs-state" } };
    for (size_t i = 0; i < sizeof saved / sizeof saved[0]; i++) {
        const json_t *prev = json_object_get(undo, saved[i][0]);
        if (!lab || !prev) continue;
        char *path = node_path(lab, node, saved[i][1]);
        rc |= replace_file(path, json_string_value(prev));
        free(path);
    }
    const json_t *sys = json_object_get(undo, "sysfs");
    const char *key;
    const json_t *v;
    if (lab && json_is_object(sys))
        json_object_foreach((json_t *)sys, key, v) {
            if (strcmp(key, "state") && strcmp(key, "phys_state")) continue;
            char rel[128];
            snprintf(rel, sizeof rel, IB_PORT "/%s", key);
            char *path = node_path(lab, node, rel);
            rc |= replace_file(path, json_string_value(v));
            free(path);
        }
    const struct vg_inj_ops *k = vg_inj_kind_parse(vg_json_str(r, "kind", ""), &kind, &code) ? vg_inj_ops(kind) : NULL;
    if (k && k->undo && k->undo(o, r, err, errlen)) rc = -1;
    if (rc && !err[0]) snprintf(err, errlen, "clear %s on %s: %s", k ? k->name : "?", node, strerror(errno));
    return rc;
}

/* `clear --local` on a real node: SIGCONT every stopped node daemon and job
 * step, and their descendants. */
static int clear_local(const struct vg_inject_opts *o, int *n)
{
    pid_t *p;
    size_t np = node_procs(o, &p);
    for (size_t i = 0; i < np; i++)
        if (kill(p[i], SIGCONT) == 0) ++*n;
    free(p);
    return 0;
}

int vg_inject_clear(const struct vg_inject_opts *o, int *ncleared, char *err, size_t errlen)
{
    *ncleared = 0;
    err[0] = 0;
    if (o->node && !valid_node(o->node)) return fail(err, errlen, -2, "--node: '%s' is not a node name", o->node);
    if (is_local(o) && !o->record) return clear_local(o, ncleared);
    char *path = record_path(o);
    if (!path) return fail(err, errlen, -2, "clear: no record file (--record FILE or --lab)");
    char *text;
    size_t len;
    if (vg_read_file(NULL, path, 64u << 20, &text, &len)) {
        int rc = errno == ENOENT ? 0 : fail(err, errlen, -1, "%s: %s", path, strerror(errno));
        free(path);
        return rc;
    }
    char perr[128];
    json_t *list = vg_inject_parse_records(text, len, perr, sizeof perr);
    free(text);
    if (!list) {
        fail(err, errlen, -2, "%s: %s", path, perr);
        free(path);
        return -2;
    }
    int rc = 0;
    for (size_t i = json_array_size(list); i-- > 0;) {
        json_t *r = json_array_get(list, i);
        if (json_is_true(json_object_get(r, "cleared"))) continue;
        if (o->node && strcmp(o->node, vg_json_str(r, "node", ""))) continue;
        if (undo_one(o, r, err, errlen)) rc = -1;
        json_t *c = json_object();
        json_object_set_new(c, "clear", json_string(vg_json_str(r, "id", "")));
        json_object_set_new(c, "time", vg_json_time(vg_now_ms()));
        if (append_record(path, c)) rc = fail(err, errlen, -1, "%s: %s", path, strerror(errno));
        json_decref(c);
        ++*ncleared;
    }
    json_decref(list);
    free(path);
    return rc;
}
