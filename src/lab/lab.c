/* lab.c — `vigil lab up`: lays out the state directory, writes slurm.conf,
 * topology.conf and the munge key, starts munged, slurmctld and the per-node
 * daemons (slurmd, each in its own UTS namespace), and waits until every node
 * is idle.  Stopping and status live in lab_down.c. */
#include "lab/lab.h"
#include "orch/slurm.h"
#include "util/proc.h"
#include "util/rootfs.h"
#include "util/sbuf.h"
#include "util/spawn.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

struct lab {
    const struct vg_lab_opts *o;
    const char *dir;
    char conf[600];
    int port_base;
    char tag[600], vlab[600], sconf[700];   /* environment entries of every daemon */
    char vigil[600];                        /* this vigil binary (serve and the agents) */
    char fake_nvml[600];                    /* the fake libnvidia-ml for the agents, or "" */
    char fake_amdsmi[600];                  /* the fake libamd_smi for the AMD nodes' agents, or "" */
    char fake_verbs[600];                   /* the fake libibverbs for the agents, or "" */
    char tools[600];                        /* the burn-in stand-in tools' folder, or "" */
    char controller[VG_LAB_CTL_LIST];       /* http://127.0.0.1:PORT of the lab's serve, comma-separated */
    char *err;
    size_t errlen;
};

static void lab_err(struct lab *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void lab_err(struct lab *l, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(l->err, l->errlen, fmt, ap);
    va_end(ap);
}

static char *dpath(const char *dir, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char *dpath(const char *dir, const char *fmt, ...)
{
    struct sbuf b = SBUF_INIT;
    sbuf_printf(&b, "%s/", dir);
    va_list ap;
    va_start(ap, fmt);
    char *rel;
    if (vasprintf(&rel, fmt, ap) < 0) rel = NULL;
    va_end(ap);
    sbuf_puts(&b, rel ? rel : "");
    free(rel);
    return sbuf_take(&b);
}

static int write_file(const char *path, const void *data, size_t len, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    if (fd < 0) return -1;
    ssize_t w = write(fd, data, len);
    int rc = (w == (ssize_t)len && fchmod(fd, mode) == 0) ? 0 : -1;
    close(fd);
    return rc;
}

/* The last lines of a log, joined with " | ", for error messages. */
static void log_tail(const char *path, char *buf, size_t n)
{
    char *data;
    size_t len;
    buf[0] = 0;
    if (vg_read_file(NULL, path, 8u << 20, &data, &len)) return;
    const char *p = data + len;
    for (int lines = 0; p > data && lines < 4; lines++) {
        p--;
        while (p > data && p[-1] != '\n') p--;
    }
    struct sbuf b = SBUF_INIT;
    for (char *s = (char *)p, *save = NULL, *t = strtok_r(s, "\n", &save); t; t = strtok_r(NULL, "\n", &save))
        sbuf_printf(&b, "%s%s", b.len ? " | " : "", t);
    snprintf(buf, n, "%s: %s", path, b.s ? b.s : "(empty)");
    sbuf_free(&b);
    free(data);
}

/* ---- configuration ------------------------------------------------------ */

static const char *node_range(int first, int last, char *buf, size_t n)
{
    if (first == last) snprintf(buf, n, "n%d", first);
    else snprintf(buf, n, "n[%d-%d]", first, last);
    return buf;
}

static int rack_of(const struct vg_lab_opts *o, int i)
{
    return o->rack_size > 0 ? (i - 1) / o->rack_size + 1 : 1;
}

static int nracks(const struct vg_lab_opts *o) { return rack_of(o, o->nodes); }

/* Node i's GPU vendor: the vendors of --gpu taken in turn. */
static bool node_amd(const struct vg_lab_opts *o, int i)
{
    const char *g = o->gpu && *o->gpu ? o->gpu : "nvidia";
    int n = strchr(g, ',') ? 2 : 1;
    const char *mine = (i - 1) % n == 0 ? g : strchr(g, ',') + 1;
    return !strncmp(mine, "amd", 3);
}

/* The XGMI hive of AMD node i (each node's eight GPUs are one hive). */
static unsigned long long hive_of(int i) { return 0x5e1f000000000000ULL + (unsigned long long)i; }

/* Adds "Key=Value" unless an extra line sets the same key (then that one goes
 * in its place). */
static void conf_set(struct sbuf *b, const struct vg_lab_opts *o, bool *used, const char *key,
                     const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void conf_set(struct sbuf *b, const struct vg_lab_opts *o, bool *used, const char *key,
                     const char *fmt, ...)
{
    size_t kl = strlen(key);
    for (size_t i = 0; i < o->nconf_extra; i++)
        if (!strncasecmp(o->conf_extra[i], key, kl) && o->conf_extra[i][kl] == '=') {
            if (!used[i]) sbuf_printf(b, "%s\n", o->conf_extra[i]);
            used[i] = true;
            return;
        }
    va_list ap;
    va_start(ap, fmt);
    char *v;
    if (vasprintf(&v, fmt, ap) < 0) v = NULL;
    va_end(ap);
    sbuf_printf(b, "%s=%s\n", key, v ? v : "");
    free(v);
}

static char *gen_conf(const struct lab *l, const char *host)
{
    const struct vg_lab_opts *o = l->o;
    const char *d = l->dir;
    bool *used = vg_xcalloc(o->nconf_extra + 1, sizeof *used);
    struct sbuf b = SBUF_INIT;
    sbuf_printf(&b, "# slurm.conf generated by `vigil lab up` for %s\n", d);
#define SET(k, ...) conf_set(&b, o, used, k, __VA_ARGS__)
    SET("ClusterName", "vigil");
    SET("SlurmctldHost", "%s(127.0.0.1)", host);
    SET("SlurmctldPort", "%d", l->port_base);
    SET("SlurmUser", "root");
    SET("SlurmdUser", "root");
    SET("AuthType", "auth/munge");
    SET("CredType", "cred/munge");
    /* cred_expire: a requeued job is held this long + 1 s (5 is the minimum) */
    SET("AuthInfo", "socket=%s/munge/munge.socket,cred_expire=5", d);
    SET("StateSaveLocation", "%s/ctld", d);
    SET("SlurmdSpoolDir", "%s/spool/%%n", d);
    SET("SlurmctldPidFile", "%s/run/slurmctld.pid", d);
    SET("SlurmdPidFile", "%s/run/slurmd-%%n.pid", d);
    SET("SlurmctldLogFile", "%s/log/slurmctld.log", d);
    SET("SlurmdLogFile", "%s/log/slurmd-%%n.log", d);
    SET("SlurmctldDebug", "info");
    SET("SlurmdDebug", "info");
    SET("MailProg", "/bin/true");
    /* no cgroups: works without systemd, in containers, with many slurmd per host */
    SET("ProctrackType", "proctrack/linuxproc");
    SET("TaskPlugin", "task/none");
    SET("JobAcctGatherType", "jobacct_gather/none");
    SET("AccountingStorageType", "accounting_storage/none");
    SET("JobCompType", "jobcomp/none");
    SET("MpiDefault", "none");
    SET("SwitchType", "switch/none");
    SET("SelectType", "select/cons_tres");
    SET("SelectTypeParameters", "CR_CPU");
    SET("SchedulerType", "sched/backfill");
    /* sched_interval=1: nothing else wakes the scheduler when a requeued job's BeginTime passes */
    SET("SchedulerParameters", "bf_interval=1,sched_interval=1");
    SET("TopologyPlugin", "topology/tree");
    /* 1: a node set DOWN by an admin stays DOWN until resumed (2 would undo drills) */
    SET("ReturnToService", "1");
    SET("JobRequeue", "1");
    SET("SlurmctldTimeout", "10");
    SET("SlurmdTimeout", "10");
    SET("MessageTimeout", "5");
    SET("InactiveLimit", "0");
    SET("MinJobAge", "60");
    SET("KillWait", "2");
    SET("Waittime", "0");
    SET("BatchStartTimeout", "10");
    /* burn-in never gets in the way (docs/burnin.md): a job of a higher
     * PriorityTier partition preempts a vigil-burnin job by cancelling it */
    SET("PreemptType", "preempt/partition_prio");
    SET("PreemptMode", "CANCEL");
    if (o->gpus > 0) SET("GresTypes", "gpu");
    /* one machine plays many nodes: each node has what slurm.conf says (CPUs,
     * GPUs without device files), not what this machine has */
    if (o->gpus > 0 || o->cpus > 0) SET("SlurmdParameters", "config_overrides");
#undef SET
    for (size_t i = 0; i < o->nconf_extra; i++)
        if (!used[i] && !vg_startswith(o->conf_extra[i], "NodeName=") &&
            !vg_startswith(o->conf_extra[i], "PartitionName="))
            sbuf_printf(&b, "%s\n", o->conf_extra[i]);
    int cpus = o->cpus > 0 ? o->cpus : 2;
    if (cpus < o->gpus) cpus = o->gpus;   /* one task per GPU */
    for (int i = 1; i <= o->nodes; i++) {
        bool spare = i > o->nodes - o->spares;
        char gres[32] = "";   /* AMD's typed as Slurm's rsmi AutoDetect names an MI300X */
        if (o->gpus > 0) snprintf(gres, sizeof gres, " Gres=gpu:%s%d", node_amd(o, i) ? "mi300x:" : "", o->gpus);
        sbuf_printf(&b, "NodeName=n%d NodeHostname=n%d NodeAddr=127.0.0.1 Port=%d CPUs=%d RealMemory=1000%s "
                        "Weight=%d Feature=rack%d%s State=UNKNOWN\n",
                    i, i, l->port_base + i, cpus, gres, spare ? 100 : 1, rack_of(o, i), spare ? ",spare" : "");
    }
    for (size_t i = 0; i < o->nconf_extra; i++)
        if (vg_startswith(o->conf_extra[i], "NodeName=")) sbuf_printf(&b, "%s\n", o->conf_extra[i]);
    char r[64];
    sbuf_printf(&b, "PartitionName=gpu Nodes=%s Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO "
                    "PriorityTier=10 PreemptMode=OFF\n",
                node_range(1, o->nodes, r, sizeof r));
    sbuf_printf(&b, "PartitionName=" VG_LAB_BURNIN_PARTITION " Nodes=%s Default=NO MaxTime=INFINITE State=UP "
                    "OverSubscribe=NO PriorityTier=1 PreemptMode=CANCEL\n",
                node_range(1, o->nodes, r, sizeof r));
    for (size_t i = 0; i < o->nconf_extra; i++)
        if (vg_startswith(o->conf_extra[i], "PartitionName=")) sbuf_printf(&b, "%s\n", o->conf_extra[i]);
    free(used);
    return sbuf_take(&b);
}

/* topology.conf (one switch per rack under a spine) and the racks file
 * ("node rackK" per line, what the controller's rack rule reads). */
static void gen_topology(const struct vg_lab_opts *o, struct sbuf *topo, struct sbuf *racks)
{
    char r[64];
    int nr = nracks(o);
    sbuf_puts(topo, "# topology.conf generated by `vigil lab up`: one switch per rack\n");
    for (int k = 1; k <= nr; k++) {
        int first = (k - 1) * (o->rack_size > 0 ? o->rack_size : o->nodes) + 1;
        int last = k == nr ? o->nodes : first + o->rack_size - 1;
        sbuf_printf(topo, "SwitchName=rack%d Nodes=%s\n", k, node_range(first, last, r, sizeof r));
    }
    if (nr > 1) sbuf_printf(topo, "SwitchName=spine Switches=rack[1-%d]\n", nr);
    for (int i = 1; i <= o->nodes; i++) sbuf_printf(racks, "n%d rack%d\n", i, rack_of(o, i));
}

/* The controller's policy for the lab (docs/controller.md): the spares form
 * the pool, each rack is a domain, and the breaker is sized for a cluster of
 * a handful of nodes (one node is already 20 % of five). */
static char *gen_policy(const struct vg_lab_opts *o)
{
    struct sbuf b = SBUF_INIT;
    char r[64];
    sbuf_puts(&b, "# vigil-policy.conf generated by `vigil lab up` (docs/controller.md)\n");
    if (o->spares > 0) sbuf_printf(&b, "spares = %s\n", node_range(o->nodes - o->spares + 1, o->nodes, r, sizeof r));
    /* an NVL72-shaped lab's racks: their domains come from the nodes' fabric */
    for (int k = 1; o->rack_size > 0 && !o->nvl72 && k <= nracks(o); k++) {
        int first = (k - 1) * o->rack_size + 1, last = k == nracks(o) ? o->nodes : first + o->rack_size - 1;
        sbuf_printf(&b, "domain rack%d = %s\n", k, node_range(first, last, r, sizeof r));
    }
    sbuf_puts(&b, "domain_max_unavailable = 2\nbreaker = 50% / 30s\n");
    for (size_t i = 0; i < o->npolicy_extra; i++) sbuf_printf(&b, "%s\n", o->policy_extra[i]);
    return sbuf_take(&b);
}

/* ---- ports -------------------------------------------------------------- */

static int free_port_block(int nodes)
{
    int *ports, n = vg_listen_ports(&ports);
    for (int base = VG_LAB_PORT_FIRST; base + nodes < 65000; base += VG_LAB_PORT_STEP) {
        bool busy = false;
        for (int i = 0; i < n && !busy; i++) busy = ports[i] >= base && ports[i] <= base + nodes;
        if (!busy) { free(ports); return base; }
    }
    free(ports);
    return -1;
}

/* ---- daemons ------------------------------------------------------------ */

static void record_daemon(const struct lab *l, const char *name, const char *node, pid_t pid)
{
    char *p = dpath(l->dir, "run/daemons");
    FILE *f = fopen(p, "ae");
    if (f) {
        fprintf(f, "%s %s %d\n", name, node && *node ? node : "-", (int)pid);
        fclose(f);
    }
    free(p);
}

static pid_t start(struct lab *l, const char *name, const char *node, const char *const argv[],
                   const char *const *extra_env, int (*pre)(void *), void *arg)
{
    const char *env[12] = { l->tag, l->vlab, l->sconf };
    for (int i = 0, k = 3; extra_env && extra_env[i] && k < 11; i++) env[k++] = extra_env[i];
    char *out = node ? dpath(l->dir, "log/%s-%s.out", name, node) : dpath(l->dir, "log/%s.out", name);
    pid_t pid = vg_spawn_daemon(argv, env, out, pre, arg);
    free(out);
    if (pid < 0) {
        lab_err(l, "cannot start %s%s%s: %s", name, node ? " for " : "", node ? node : "", strerror(errno));
        return -1;
    }
    record_daemon(l, name, node, pid);
    return pid;
}

/* In the node daemon, before exec: its own UTS namespace, hostname = node. */
static int enter_node(void *arg)
{
    const char *node = arg;
    if (unshare(CLONE_NEWUTS)) return -1;
    return sethostname(node, strlen(node));
}

/* The per-node daemons, started in the node's namespace in this order: one
 * line and one argv builder each (buf holds the strings argv and env point
 * into; env gets extra environment entries). */
typedef void (*node_argv_fn)(const struct lab *l, const char *node, char *buf, size_t n, const char *argv[],
                             const char *env[]);

static void slurmd_argv(const struct lab *l, const char *node, char *buf, size_t n, const char *argv[],
                        const char *env[])
{
    (void)buf;
    (void)n;
    (void)env;
    const char *a[] = { "slurmd", "-D", "-N", node, "-f", l->conf, NULL };
    memcpy(argv, a, sizeof a);
}

/* `vigil agent` for the node: its kernel-log file, the fake NVML library
 * reading the node's nvml-state, the lab's controller over MUNGE. */
static void agent_argv(const struct lab *l, const char *node, char *buf, size_t n, const char *argv[],
                       const char *env[])
{
    char *p = buf, *end = buf + n;
#define PUT(var, ...) (var = p, p += snprintf(p, (size_t)(end - p), __VA_ARGS__) + 1, p = p > end ? end : p)
    const char *kmsg, *spool, *sock, *gpulib = NULL, *gpustate, *slurmd, *root, *vlib = NULL, *vstate, *nic_s;
    PUT(kmsg, "%s/nodes/%s/kmsg", l->dir, node);
    PUT(spool, "%s/nodes/%s/agent.spool", l->dir, node);
    PUT(sock, "%s/munge/munge.socket", l->dir);
    PUT(slurmd, "%s/spool/%s", l->dir, node);   /* the SlurmdSpoolDir of slurm.conf */
    PUT(root, "%s/nodes/%s", l->dir, node);     /* its sysfs tree (lab_hw.c) */
    PUT(nic_s, "%d", VG_LAB_NIC_PROBE_S);
    if (!strcmp(vg_lab_node_gpu(l->dir, node), "amd")) {
        PUT(gpustate, "FAKE_AMDSMI_STATE=%s/nodes/%s/amdsmi-state", l->dir, node);
        if (l->fake_amdsmi[0]) PUT(gpulib, "VIGIL_AMDSMI_LIB=%s", l->fake_amdsmi);
    } else {
        PUT(gpustate, "FAKE_NVML_STATE=%s/nodes/%s/nvml-state", l->dir, node);
        if (l->fake_nvml[0]) PUT(gpulib, "VIGIL_NVML_LIB=%s", l->fake_nvml);
    }
    PUT(vstate, "FAKE_VERBS_STATE=%s/nodes/%s/verbs-state", l->dir, node);
    if (l->fake_verbs[0]) PUT(vlib, "VIGIL_VERBS_LIB=%s", l->fake_verbs);
#undef PUT
    /* the NIC probe every 2 s (a wedged NIC is seen within about 3 s), the GPU probe every 5 s */
    const char *a[] = { l->vigil, "agent", "--node", node, "--kmsg", kmsg, "--controller", l->controller, "--auth",
                        "munge", "--munge-socket", sock, "--spool", spool, "--interval", "5", "--nic-interval", nic_s,
                        "--root", root, "--slurmd-spool", slurmd, NULL };
    memcpy(argv, a, sizeof a);
    const char *e[] = { gpustate, vstate, gpulib, vlib };
    for (int i = 0, k = 0; i < 4; i++)
        if (e[i]) env[k++] = e[i];
}

static const struct {
    const char *name;
    node_argv_fn argv;
    bool vigil;                      /* not started with --no-vigil */
} node_daemons[] = {
    { "slurmd", slurmd_argv, false },
    { "agent", agent_argv, true },
};

/* Starts a node's daemons (node_daemons[]), skipping those listed alive in
 * running (NULL: start them all). */
static int start_node(struct lab *l, const char *node, const struct vg_lab_daemon *running, size_t nrunning)
{
    char envnode[96], buf[4096];
    snprintf(envnode, sizeof envnode, "VIGIL_NODE=%s", node);
    for (size_t i = 0; i < sizeof node_daemons / sizeof node_daemons[0]; i++) {
        if (node_daemons[i].vigil && l->o->no_vigil) continue;
        bool alive = false;
        for (size_t k = 0; k < nrunning; k++)
            alive |= running[k].alive && !strcmp(running[k].node, node) && !strcmp(running[k].name, node_daemons[i].name);
        if (alive) continue;
        const char *argv[32] = { NULL }, *env[8] = { envnode };
        node_daemons[i].argv(l, node, buf, sizeof buf, argv, env + 1);
        if (start(l, node_daemons[i].name, node, argv, env, enter_node, (void *)node) < 0) return -1;
    }
    return 0;
}

/* A fake library the agents load: $VAR, $VAR2, or tests/NAME next to this
 * binary (build/vigil → build/tests/); "" when none is readable. */
static void find_fake(const struct lab *l, const char *var, const char *var2, const char *name, char *out, size_t n)
{
    const char *env = getenv(var);
    if (!env || !*env) env = getenv(var2);
    if (env && *env && access(env, R_OK) == 0) {
        vg_strlcpy(out, env, n);
        return;
    }
    char exe[sizeof l->vigil];
    vg_strlcpy(exe, l->vigil, sizeof exe);
    char *slash = strrchr(exe, '/');
    out[0] = 0;
    if (!slash) return;
    *slash = 0;
    snprintf(out, n, "%.500s/tests/%s", exe, name);
    if (access(out, R_OK)) out[0] = 0;
}

static void find_fake_libs(struct lab *l)
{
    find_fake(l, "VIGIL_FAKE_NVML", "FAKE_NVML", "libnvidia-ml.so.1", l->fake_nvml, sizeof l->fake_nvml);
    find_fake(l, "VIGIL_FAKE_AMDSMI", "FAKE_AMDSMI", "libamd_smi.so.26", l->fake_amdsmi, sizeof l->fake_amdsmi);
    find_fake(l, "VIGIL_FAKE_VERBS", "FAKE_VERBS", "libibverbs.so.1", l->fake_verbs, sizeof l->fake_verbs);
}

const char *vg_lab_node_gpu(const char *dir, const char *node)
{
    char *p = dpath(dir, "nodes/%s/amdsmi-state", node);
    bool amd = access(p, F_OK) == 0;
    free(p);
    return amd ? "amd" : "nvidia";
}

/* The stand-in tools for the burn-in (dcgmi, all_reduce_perf, …: they print
 * real runs of the tools, tests/standins/README.md) in the source tree this
 * vigil was built in: <tree>/tests/standins beside <tree>/build/vigil. */
static void find_tools(struct lab *l)
{
    char d[sizeof l->vigil];
    l->tools[0] = 0;
    vg_strlcpy(d, l->vigil, sizeof d);
    for (int up = 0; up < 2 && !l->tools[0]; up++) {
        char *slash = strrchr(d, '/');
        if (!slash) return;
        *slash = 0;
        snprintf(l->tools, sizeof l->tools, "%.500s/tests/standins", d);
        char *probe = dpath(l->tools, "dcgmi");
        if (access(probe, X_OK)) l->tools[0] = 0;
        free(probe);
    }
}

/* The environment of a command run as a lab node (what its agent gets, and
 * the burn-in stand-in tools' state file). */
int vg_lab_node_env(const char *dir, const char *node, char *buf, size_t n, const char *env[6])
{
    struct lab l = { .dir = dir };
    ssize_t el = readlink("/proc/self/exe", l.vigil, sizeof l.vigil - 1);
    l.vigil[el > 0 ? el : 0] = 0;
    find_fake_libs(&l);
    char *p = buf, *end = buf + n;
    int k = 0;
#define PUT(...) (env[k++] = p, p += snprintf(p, (size_t)(end - p), __VA_ARGS__) + 1, p = p > end ? end : p)
    PUT("VIGIL_NODE=%s", node);
    PUT("VIGIL_BURNIN_STATE=%s/nodes/%s/burnin-state", dir, node);
    if (!strcmp(vg_lab_node_gpu(dir, node), "amd")) {
        PUT("FAKE_AMDSMI_STATE=%s/nodes/%s/amdsmi-state", dir, node);
        if (l.fake_amdsmi[0] && !getenv("VIGIL_AMDSMI_LIB")) PUT("VIGIL_AMDSMI_LIB=%s", l.fake_amdsmi);
    } else {
        PUT("FAKE_NVML_STATE=%s/nodes/%s/nvml-state", dir, node);
        if (l.fake_nvml[0] && !getenv("VIGIL_NVML_LIB")) PUT("VIGIL_NVML_LIB=%s", l.fake_nvml);
    }
#undef PUT
    env[k] = NULL;
    return p < end ? 0 : -1;
}

/* A fresh read token for the lab's controller in DIR/etc/read.token (0600). */
static int write_read_token(struct lab *l, const char *path)
{
    unsigned char r[24];
    char tok[2 * sizeof r + 2];
    if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) return lab_err(l, "read token: %s", strerror(errno)), -1;
    for (size_t i = 0; i < sizeof r; i++) snprintf(tok + 2 * i, 3, "%02x", r[i]);
    strcat(tok, "\n");
    if (write_file(path, tok, strlen(tok), 0600)) return lab_err(l, "%s: %s", path, strerror(errno)), -1;
    return 0;
}

/* Controller k (1, 2, …; the daemon "serve", of "ck" from the second on,
 * its log log/serve.out, serve-c2.out, …, its port file run/serve.port,
 * serve-2.port, …): `vigil serve` on port (0: a free one),
 * MUNGE through the lab's munged, its store db, reads with
 * DIR/etc/read.token; its URL appended to l->controller's list. */
static int start_one_serve(struct lab *l, int k, const char *db, int port_given)
{
    char *pf = k == 1 ? dpath(l->dir, "run/serve.port") : dpath(l->dir, "run/serve-%d.port", k);
    char listen[32], ck[16];
    snprintf(listen, sizeof listen, "127.0.0.1:%d", port_given);
    snprintf(ck, sizeof ck, "c%d", k);
    unlink(pf);   /* a restart: the file its predecessor wrote is not this one's port */
    char *sock = dpath(l->dir, "munge/munge.socket"), *rt = dpath(l->dir, "etc/read.token");
    /* the controller acts on the lab's Slurm, under DIR/etc/vigil-policy.conf when there is one */
    char *policy = dpath(l->dir, "etc/vigil-policy.conf");
    /* every agent of the lab connects from 127.0.0.1, where a real fleet's come from an address
     * each: the per-client cap is raised to hold them all, and the drill's and the CLI's besides */
    char per_client[16];
    snprintf(per_client, sizeof per_client, "%d", 2 * l->o->nodes + 32);
    const char *argv[] = { l->vigil, "serve", "--listen", listen, "--db", db, "--auth", "munge",
                           "--munge-socket", sock, "--port-file", pf, "--slurm-conf", l->conf, "--read-token-file", rt,
                           "--max-per-client", per_client,
                           access(policy, R_OK) == 0 ? "--policy" : NULL, policy, NULL };
    pid_t pid = start(l, "serve", k == 1 ? NULL : ck, argv, NULL, NULL, NULL);
    int rc = pid < 0 ? -1 : 0;
    char port[16] = "";
    for (int64_t end = vg_mono_ms() + 10000; !rc && vg_mono_ms() < end; vg_sleep_ms(5)) {
        if (vg_read_line(NULL, pf, port, sizeof port) == 0 && port[0]) break;
        if (!vg_proc_alive(pid)) break;
    }
    if (!rc && !port[0]) {
        char tail[1024], *log = k == 1 ? dpath(l->dir, "log/serve.out") : dpath(l->dir, "log/serve-%s.out", ck);
        log_tail(log, tail, sizeof tail);
        free(log);
        lab_err(l, "vigil serve did not start: %s", tail);
        rc = -1;
    }
    if (!rc) {
        size_t len = strlen(l->controller);
        snprintf(l->controller + len, sizeof l->controller - len, "%shttp://127.0.0.1:%s", len ? "," : "", port);
    }
    free(pf), free(sock), free(policy), free(rt);
    return rc;
}

/* What the lab's controllers are given as --db: the private server's
 * conninfo, or DIR/serve/incidents.db. */
static void store_db(const char *dir, const char *store, char *db, size_t n)
{
    if (store && !strcmp(store, "postgres")) vg_lab_pg_conninfo(dir, db, n);
    else snprintf(db, n, "%s/serve/incidents.db", dir);
}

/* The lab's controllers: K of them on the private PostgreSQL server
 * (--store postgres), else one on DIR/serve/incidents.db; their URLs go into
 * the marker (one line, comma-separated). */
static int start_serve(struct lab *l)
{
    char *sdir = dpath(l->dir, "serve"), *rt = dpath(l->dir, "etc/read.token");
    char db[PATH_MAX + 64];
    int rc = mkdir(sdir, 0755) ? (lab_err(l, "%s: %s", sdir, strerror(errno)), -1) : 0;
    if (!rc) rc = write_read_token(l, rt);
    if (!rc && l->o->store && !strcmp(l->o->store, "postgres")) {
        const char *env[] = { l->tag, l->vlab, NULL };
        pid_t pid;
        rc = vg_lab_pg_start(l->dir, env, &pid, l->err, l->errlen);
        if (!rc) record_daemon(l, "postgres", NULL, pid);
    }
    store_db(l->dir, l->o->store, db, sizeof db);
    for (int k = 1; !rc && k <= (l->o->controllers > 0 ? l->o->controllers : 1); k++) rc = start_one_serve(l, k, db, 0);
    if (!rc) {
        char *m = dpath(l->dir, VG_LAB_MARKER);
        FILE *f = fopen(m, "ae");
        if (f) {
            fprintf(f, "controller=%s\n", l->controller);
            fclose(f);
        }
        free(m);
    }
    free(sdir), free(rt);
    return rc;
}

static bool wait_file(const char *path, int ms)
{
    for (int64_t end = vg_mono_ms() + ms; vg_mono_ms() < end; vg_sleep_ms(10))
        if (access(path, F_OK) == 0) return true;
    return false;
}

static bool listening(int port)
{
    int *ports, n = vg_listen_ports(&ports);
    bool found = false;
    for (int i = 0; i < n && !found; i++) found = ports[i] == port;
    free(ports);
    return found;
}

/* Polls the nodes (one scontrol call each 100 ms) until all are idle, failing
 * early when a daemon died. */
static int wait_idle(struct lab *l, pid_t ctld, int ms)
{
    struct vg_slurm s = { .conf = l->conf, .timeout_ms = 5000 };
    char tail[1024], last[256] = "no answer from slurmctld";
    int64_t end = vg_mono_ms() + ms;
    while (vg_mono_ms() < end) {
        if (!vg_proc_alive(ctld)) {
            char *p = dpath(l->dir, "log/slurmctld.log");
            log_tail(p, tail, sizeof tail);
            free(p);
            lab_err(l, "slurmctld exited: %s", tail);
            return -1;
        }
        if (!listening(l->port_base)) {   /* scontrol would back off for a second */
            vg_sleep_ms(10);
            continue;
        }
        struct vg_node_state *st;
        size_t n;
        if (vg_slurm_nodes(&s, NULL, &st, &n) == 0) {
            size_t idle = 0, own = 0;
            for (size_t i = 0; i < n; i++) {
                long k;
                /* only the lab's own nodes (n1…nN): one of --conf-extra's has no slurmd to come up */
                if (st[i].name[0] != 'n' || !vg_parse_long(st[i].name + 1, &k) || k < 1 || k > l->o->nodes) continue;
                own++;
                /* a spare the controller already put in its reservation is idle too */
                if (!strcmp(st[i].state, "IDLE") || !strcmp(st[i].state, "IDLE+RESERVED")) idle++;
                else snprintf(last, sizeof last, "node %s is %s", st[i].name, st[i].state);
            }
            free(st);
            if (idle == own && own == (size_t)l->o->nodes) return 0;
        }
        vg_sleep_ms(100);
    }
    char *p = dpath(l->dir, "log/slurmctld.log");
    log_tail(p, tail, sizeof tail);
    free(p);
    lab_err(l, "nodes not idle after %d ms (%s); %s", ms, last, tail);
    return -1;
}

/* ---- up ----------------------------------------------------------------- */

static int check_opts(const struct vg_lab_opts *o, const char *dir, char *err, size_t n)
{
    if (o->nodes < 1 || o->nodes > 512) return snprintf(err, n, "nodes: %d is not in 1..512", o->nodes), -2;
    if (o->spares < 0 || o->spares >= o->nodes)
        return snprintf(err, n, "--spares: %d must leave at least one compute node", o->spares), -2;
    if (o->nvl72 && o->gpus < 1) return snprintf(err, n, "--nvl72: needs --gpus-per-node (4 for a GB200 tray)"), -2;
    if (o->rack_size < 0 || o->cpus < 0 || o->cpus > 1024)
        return snprintf(err, n, "--rack-size/--cpus: negative or too large"), -2;
    const char *g = o->gpu ? o->gpu : "nvidia";
    if (strcmp(g, "nvidia") && strcmp(g, "amd") && strcmp(g, "nvidia,amd") && strcmp(g, "amd,nvidia"))
        return snprintf(err, n, "--gpu: '%s' is not nvidia, amd or nvidia,amd", g), -2;
    const char *store = o->store ? o->store : "sqlite";
    if (strcmp(store, "sqlite") && strcmp(store, "postgres"))
        return snprintf(err, n, "--store: '%s' is not sqlite or postgres", store), -2;
    if (o->controllers < 0 || o->controllers > VG_LAB_CTL_MAX)
        return snprintf(err, n, "--controllers: %d is not in 1..%d", o->controllers, VG_LAB_CTL_MAX), -2;
    if (o->controllers > 1 && strcmp(store, "postgres"))
        return snprintf(err, n, "--controllers %d: several controllers share one store: add --store postgres",
                        o->controllers), -2;
    if ((o->controllers > 1 || strcmp(store, "sqlite")) && o->no_vigil)
        return snprintf(err, n, "--controllers/--store: the lab runs no controller with --no-vigil"), -2;
    char bin[PATH_MAX];
    if (!strcmp(store, "postgres") && vg_lab_pg_bin(bin, sizeof bin))
        return snprintf(err, n, "--store postgres: no PostgreSQL server installed (Debian package postgresql)"), -2;
    if (dir[0] != '/' || strlen(dir) > 400 || strpbrk(dir, " \t\n=,\"'\\"))
        return snprintf(err, n, "--dir: '%s' must be an absolute path without spaces, quotes, '=' or ','", dir), -2;
    for (size_t i = 0; i < o->nconf_extra; i++)
        if (!strchr(o->conf_extra[i], '=') || strchr(o->conf_extra[i], '\n'))
            return snprintf(err, n, "--conf-extra: '%s' is not Key=Value", o->conf_extra[i]), -2;
    for (size_t i = 0; i < o->npolicy_extra; i++)
        if (!strchr(o->policy_extra[i], '=') || strchr(o->policy_extra[i], '\n'))
            return snprintf(err, n, "--policy-extra: '%s' is not 'key = value'", o->policy_extra[i]), -2;
    return 0;
}

static int make_tree(struct lab *l)
{
    const char *dirs[] = { "etc", "munge", "ctld", "spool", "run", "log", "nodes" };
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        char *p = dpath(l->dir, "%s", dirs[i]);
        int rc = mkdir(p, 0755);
        free(p);
        if (rc) return lab_err(l, "%s/%s: %s", l->dir, dirs[i], strerror(errno)), -1;
    }
    for (int i = 1; i <= l->o->nodes; i++) {
        const char *sub[] = { "", "/sys", "/dev" };
        for (int k = 0; k < 3; k++) {
            char *p = dpath(l->dir, "nodes/n%d%s", i, sub[k]);
            int rc = mkdir(p, 0755);
            free(p);
            if (rc) return lab_err(l, "nodes/n%d: %s", i, strerror(errno)), -1;
        }
        bool amd = node_amd(l->o, i);
        if (amd) {
            char *p = dpath(l->dir, "nodes/n%d/dev/dri", i);
            int rc = mkdir(p, 0755);
            free(p);
            if (rc) return lab_err(l, "nodes/n%d/dev/dri: %s", i, strerror(errno)), -1;
        }
        for (int g = 0; g < l->o->gpus; g++) {   /* what gres.conf's File= names */
            char *p = amd ? dpath(l->dir, "nodes/n%d/dev/dri/renderD%d", i, 128 + g) : dpath(l->dir, "nodes/n%d/dev/nvidia%d", i, g);
            int rc = write_file(p, "", 0, 0644);
            free(p);
            if (rc) return lab_err(l, "nodes/n%d/dev: %s", i, strerror(errno)), -1;
        }
        /* an AMD node's stand-in tools print AMD's runs (all_reduce_perf: rccl-tests') */
        const char *files[] = { "kmsg", amd ? "amdsmi-state" : "nvml-state", "burnin-state" };
        char nv[96] = "";
        if (amd) snprintf(nv, sizeof nv, "gpus=%d\ngpu*.xgmi_hive=0x%llx\n", l->o->gpus > 0 ? l->o->gpus : 8, hive_of(i));
        else if (l->o->gpus > 0) snprintf(nv, sizeof nv, "gpus=%d\n", l->o->gpus);
        const char *text[] = { "", nv, amd ? "vendor=amd\n" : "" };
        for (int k = 0; k < 3; k++) {
            char *p = dpath(l->dir, "nodes/n%d/%s", i, files[k]);
            int rc = write_file(p, text[k], strlen(text[k]), 0644);
            free(p);
            if (rc) return lab_err(l, "nodes/n%d/%s: %s", i, files[k], strerror(errno)), -1;
        }
        char node[16];
        snprintf(node, sizeof node, "n%d", i);
        if (vg_lab_node_hw(l->dir, node, l->o->nvl72 ? rack_of(l->o, i) : 0, l->err, l->errlen)) return -1;
    }
    return 0;
}

static int write_files(struct lab *l)
{
    char host[256] = "localhost";
    gethostname(host, sizeof host - 1);
    host[strcspn(host, ".")] = 0;
    struct {
        const char *rel;
        char *text;
    } f[5] = { { "etc/slurm.conf", gen_conf(l, host) } };
    struct sbuf topo = SBUF_INIT, racks = SBUF_INIT;
    gen_topology(l->o, &topo, &racks);
    f[1].rel = "etc/topology.conf", f[1].text = sbuf_take(&topo);
    f[2].rel = "racks", f[2].text = sbuf_take(&racks);
    int nf = 3;
    if (l->o->gpus > 0) {
        /* GPUs without device files: Slurm counts and schedules them; the
         * fake NVML (nodes/N/nvml-state: gpus=G) is what vigil reads */
        struct sbuf g = SBUF_INIT;
        sbuf_puts(&g, "# gres.conf generated by `vigil lab up`: each node's GPUs are files in its directory\n"
                      "# (a real AMD node can say AutoDetect=rsmi: Slurm finds its GPUs through ROCm SMI,\n"
                      "# but watches none of their health; that is vigil's)\n"
                      "AutoDetect=off\n");
        for (int i = 1; i <= l->o->nodes; i++)
            if (node_amd(l->o, i))
                sbuf_printf(&g, "NodeName=n%d Name=gpu Type=mi300x File=%s/nodes/n%d/dev/dri/renderD[128-%d]\n", i,
                            l->dir, i, 127 + l->o->gpus);
            else
                sbuf_printf(&g, "NodeName=n%d Name=gpu File=%s/nodes/n%d/dev/nvidia[0-%d]\n", i, l->dir, i, l->o->gpus - 1);
        f[nf].rel = "etc/gres.conf", f[nf++].text = sbuf_take(&g);
    }
    if (!l->o->no_vigil) f[nf].rel = "etc/vigil-policy.conf", f[nf++].text = gen_policy(l->o);
    int rc = 0;
    for (int i = 0; i < nf; i++) {
        char *p = dpath(l->dir, "%s", f[i].rel);
        if (!rc && write_file(p, f[i].text, strlen(f[i].text), 0644))
            rc = -1, lab_err(l, "%s: %s", p, strerror(errno));
        free(p);
        free(f[i].text);
    }
    if (rc) return rc;
    unsigned char key[1024];
    char *kp = dpath(l->dir, "munge/munge.key");
    if (getrandom(key, sizeof key, 0) != (ssize_t)sizeof key || write_file(kp, key, sizeof key, 0400))
        rc = -1, lab_err(l, "%s: %s", kp, strerror(errno));
    free(kp);
    return rc;
}

static int write_marker(struct lab *l)
{
    struct sbuf m = SBUF_INIT;
    sbuf_printf(&m, "nodes=%d\nspares=%d\nrack_size=%d\nport_base=%d\ngpus=%d\ngpu=%s\nconf=%s\n", l->o->nodes,
                l->o->spares, l->o->rack_size, l->port_base, l->o->gpus, l->o->gpu ? l->o->gpu : "nvidia", l->conf);
    if (l->tools[0]) sbuf_printf(&m, "tools=%s\n", l->tools);
    if (l->o->nvl72) sbuf_puts(&m, "nvl72=1\n");
    sbuf_printf(&m, "controllers=%d\nstore=%s\n", l->o->no_vigil ? 0 : l->o->controllers > 0 ? l->o->controllers : 1,
                l->o->store ? l->o->store : "sqlite");
    char *p = dpath(l->dir, VG_LAB_MARKER);
    int rc = write_file(p, m.s, m.len, 0644);
    if (rc) lab_err(l, "%s: %s", p, strerror(errno));
    free(p);
    sbuf_free(&m);
    return rc;
}

static int start_all(struct lab *l)
{
    char *sock = dpath(l->dir, "munge/munge.socket"), *key = dpath(l->dir, "munge/munge.key");
    char *pid = dpath(l->dir, "run/munged.pid"), *log = dpath(l->dir, "log/munged.log");
    char *seed = dpath(l->dir, "munge/munged.seed");
    struct sbuf a[5] = { SBUF_INIT, SBUF_INIT, SBUF_INIT, SBUF_INIT, SBUF_INIT };
    sbuf_printf(&a[0], "--socket=%s", sock);
    sbuf_printf(&a[1], "--key-file=%s", key);
    sbuf_printf(&a[2], "--pid-file=%s", pid);
    sbuf_printf(&a[3], "--log-file=%s", log);
    sbuf_printf(&a[4], "--seed-file=%s", seed);
    /* every lab node is 127.0.0.1 in slurm.conf: credentials say they come from there, however this
     * machine's host name resolves (the controller checks a credential's origin against NodeAddr) */
    const char *margv[] = { "munged", "-F", "--origin=127.0.0.1", a[0].s, a[1].s, a[2].s, a[3].s, a[4].s, NULL };
    int rc = start(l, "munged", NULL, margv, NULL, NULL, NULL) < 0 ? -1 : 0;
    char tail[1024];
    if (!rc && !wait_file(sock, 5000)) {
        log_tail(log, tail, sizeof tail);
        lab_err(l, "munged did not create its socket: %s", tail);
        rc = -1;
    }
    for (int i = 0; i < 5; i++) sbuf_free(&a[i]);
    free(sock), free(key), free(pid), free(log), free(seed);
    if (rc) return rc;
    const char *cargv[] = { "slurmctld", "-D", "-f", l->conf, NULL };
    pid_t ctld = start(l, "slurmctld", NULL, cargv, NULL, NULL, NULL);
    if (ctld < 0) return -1;
    /* slurmds started before slurmctld listens retry their registration a second later */
    for (int64_t end = vg_mono_ms() + 10000; vg_mono_ms() < end && vg_proc_alive(ctld); vg_sleep_ms(5))
        if (listening(l->port_base)) break;
    if (!l->o->no_vigil && start_serve(l)) return -1;
    for (int i = 1; i <= l->o->nodes; i++) {
        char node[16];
        snprintf(node, sizeof node, "n%d", i);
        if (start_node(l, node, NULL, 0)) return -1;
    }
    return wait_idle(l, ctld, l->o->wait_ms > 0 ? l->o->wait_ms : 60000);
}

/* What every daemon of the lab is started with: its config, tags, binary. */
static void lab_identity(struct lab *l)
{
    snprintf(l->conf, sizeof l->conf, "%s/etc/slurm.conf", l->dir);
    snprintf(l->tag, sizeof l->tag, "%s=%s", VG_LAB_TAG, l->dir);
    snprintf(l->vlab, sizeof l->vlab, "VIGIL_LAB=%s", l->dir);
    snprintf(l->sconf, sizeof l->sconf, "SLURM_CONF=%s", l->conf);
    /* The vigil binary the lab's serve and agents run: $VIGIL, else this
     * program when it is vigil.  Anything else (a test linking the lab code)
     * must not start copies of itself. */
    const char *env = getenv("VIGIL");
    ssize_t el = readlink("/proc/self/exe", l->vigil, sizeof l->vigil - 1);
    l->vigil[el > 0 ? el : 0] = 0;
    const char *base = strrchr(l->vigil, '/');
    if (env && *env) vg_strlcpy(l->vigil, env, sizeof l->vigil);
    else if (!vg_startswith(base ? base + 1 : l->vigil, "vigil")) l->vigil[0] = 0;
    find_fake_libs(l);
    find_tools(l);
}

int vg_lab_up(const struct vg_lab_opts *o, struct vg_lab_info *info, char *err, size_t errlen)
{
    int64_t t0 = vg_mono_ms();
    const char *given = o->dir && *o->dir ? o->dir : VG_LAB_DEFAULT_DIR;
    char dir[PATH_MAX];
    err[0] = 0;
    if (vg_lab_canon_dir(given, dir, sizeof dir))
        return snprintf(err, errlen, "--dir: %s: %s (its parent directory must exist)", given, strerror(errno)), -2;
    int rc = check_opts(o, dir, err, errlen);
    if (rc) return rc;
    if (vg_lab_is_lab(dir) && (rc = vg_lab_down(dir, err, errlen))) return rc;
    char **names;
    int ne = vg_list_dir(NULL, dir, &names);
    if (ne >= 0) vg_free_list(names, ne);
    if (ne > 0) {
        return snprintf(err, errlen, "--dir: %s exists, is not empty and is not a lab", dir), -2;
    }
    if (ne < 0 && mkdir(dir, 0755)) return snprintf(err, errlen, "%s: %s", dir, strerror(errno)), -1;
    chmod(dir, 0755);   /* munged wants every directory above its socket world-executable */
    struct lab l = { .o = o, .dir = dir, .err = err, .errlen = errlen };
    lab_identity(&l);
    if (!o->no_vigil && !l.vigil[0])
        return snprintf(err, errlen, "the vigil binary is unknown: set VIGIL, or use --no-vigil"), -2;
    l.port_base = o->port_base > 0 ? o->port_base : free_port_block(o->nodes);
    if (l.port_base <= 0) return snprintf(err, errlen, "no free block of %d TCP ports", o->nodes + 1), -1;
    /* the marker goes first (in write_files), so a half-made lab can be taken down */
    rc = write_marker(&l);
    if (!rc) rc = make_tree(&l);
    if (!rc) rc = write_files(&l);
    if (!rc) rc = start_all(&l);
    if (rc) {
        char ignored[256];
        if (vg_lab_is_lab(dir)) vg_lab_down(dir, ignored, sizeof ignored);
        return -1;
    }
    if (info) {
        memset(info, 0, sizeof *info);
        vg_strlcpy(info->dir, dir, sizeof info->dir);
        vg_strlcpy(info->conf, l.conf, sizeof info->conf);
        info->nodes = o->nodes, info->spares = o->spares, info->rack_size = o->rack_size, info->nvl72 = o->nvl72;
        info->port_base = l.port_base;
        info->up_ms = (long)(vg_mono_ms() - t0);
        vg_strlcpy(info->controller, l.controller, sizeof info->controller);
        vg_strlcpy(info->tools, l.tools, sizeof info->tools);
        vg_strlcpy(info->gpu, o->gpu ? o->gpu : "nvidia", sizeof info->gpu);
        info->controllers = o->controllers > 0 ? o->controllers : 1;
        vg_strlcpy(info->store, o->store ? o->store : "sqlite", sizeof info->store);
    }
    return 0;
}

/* ---- restarting a node (after a crash drill) ----------------------------- */

int vg_lab_node_start(const char *dir, const char *node, char *err, size_t errlen)
{
    struct vg_lab_info info;
    err[0] = 0;
    if (vg_lab_info(dir, &info)) return snprintf(err, errlen, "%s: not a vigil lab", dir), -1;
    struct vg_lab_opts o = { .dir = dir, .nodes = info.nodes, .spares = info.spares, .rack_size = info.rack_size,
                             .port_base = info.port_base, .no_vigil = !info.controller[0] };
    struct lab l = { .o = &o, .dir = dir, .port_base = info.port_base, .err = err, .errlen = errlen };
    lab_identity(&l);
    vg_strlcpy(l.controller, info.controller, sizeof l.controller);
    struct vg_lab_daemon *d;
    size_t nd;
    if (vg_lab_daemons(dir, &d, &nd)) return snprintf(err, errlen, "%s/run/daemons: unreadable", dir), -1;
    int rc = start_node(&l, node, d, nd);
    free(d);
    return rc;
}

/* ---- restarting a controller (after a controller-crash drill) ------------ */

int vg_lab_serve_start(const char *dir, int k, char *err, size_t errlen)
{
    struct vg_lab_info info;
    struct vg_lab_ctl c[VG_LAB_CTL_MAX];
    err[0] = 0;
    if (vg_lab_info(dir, &info)) return snprintf(err, errlen, "%s: not a vigil lab", dir), -1;
    size_t n = vg_lab_controllers(dir, c, VG_LAB_CTL_MAX);
    const char *colon = k >= 1 && (size_t)k <= n ? strrchr(c[k - 1].url, ':') : NULL;
    long port;
    if (!colon || !vg_parse_long(colon + 1, &port) || port < 1 || port > 65535)
        return snprintf(err, errlen, "%s: no controller %d (or no port in its URL)", dir, k), -1;
    if (c[k - 1].alive) return 0;
    struct vg_lab_opts o = { .dir = dir, .nodes = info.nodes, .store = info.store, .controllers = info.controllers };
    struct lab l = { .o = &o, .dir = dir, .port_base = info.port_base, .err = err, .errlen = errlen };
    lab_identity(&l);
    char db[PATH_MAX + 64];
    store_db(dir, info.store, db, sizeof db);
    /* on its own port again: the URL every agent and the marker have */
    return start_one_serve(&l, k, db, (int)port);
}
