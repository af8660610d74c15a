/* lab.h — a real local Slurm cluster on one machine (`vigil lab`): one
 * munged, one slurmctld and N `slurmd -N nX` (each in its own UTS namespace,
 * hostname nX), all under one state directory, with per-node simulated
 * hardware directories.  Started and stopped by PID; usable from C tests. */
#ifndef VG_LAB_H
#define VG_LAB_H
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define VG_LAB_DEFAULT_DIR "/tmp/vigil-lab"
#define VG_LAB_MARKER ".vigil-lab"
/* Every lab daemon (and so every slurmstepd) carries VG_LAB_TAG=DIR; clients
 * get VIGIL_LAB=DIR instead, so `down` never matches a client's shell. */
#define VG_LAB_TAG "VIGIL_LAB_DAEMON"
#define VG_LAB_PORT_FIRST 16800
#define VG_LAB_PORT_STEP 100
/* The lab's low-priority partition for burn-in passes (same nodes as `gpu`,
 * PriorityTier 1, preempted by cancelling; docs/burnin.md). */
#define VG_LAB_BURNIN_PARTITION "vigil-burnin"
/* At most this many controllers (--controllers K); their URL list's room. */
#define VG_LAB_CTL_MAX 8
#define VG_LAB_CTL_LIST (VG_LAB_CTL_MAX * 32)
/* The user the private PostgreSQL server of --store postgres runs as under root. */
#define VG_LAB_PG_USER "nobody"

struct vg_lab_opts {
    const char *dir;                 /* NULL = VG_LAB_DEFAULT_DIR; made canonical by vg_lab_up */
    int nodes;                       /* n1..nN, spares included */
    int spares;                      /* the last K nodes: Weight=100 Feature=spare */
    int rack_size;                   /* nodes per rack (switch); 0 = one rack */
    int cpus;                        /* CPUs per node; 0 = 2 (at least one per GPU) */
    int gpus;                        /* GPUs per node: Slurm Gres=gpu:G and the fake library's count;
                                      * 0 = no Gres, 8 fake GPUs */
    const char *gpu;                 /* the nodes' GPU vendors: "nvidia" (NULL: the default), "amd"
                                      * (Gres=gpu:mi300x:G, the fake AMD SMI, an XGMI hive per node), or
                                      * both, "nvidia,amd": taken in turn, n1 the first */
    int port_base;                   /* 0 = the first free block from 16800 */
    int wait_ms;                     /* for all nodes idle; 0 = 60 s */
    const char *const *conf_extra;   /* "Key=Value" lines; a default with that key is replaced */
    size_t nconf_extra;
    const char *const *policy_extra; /* "key = value" lines after the generated controller policy */
    size_t npolicy_extra;
    bool no_vigil;                   /* plain Slurm: no `vigil serve`, no agents */
    bool nvl72;                      /* NVL72-shaped racks (rack_size default 18): each rack's NVLink domain
                                      * comes from its nodes' fabric info (no `domain` lines in the policy) */    int controllers;                 /* `vigil serve` instances on the one store; 0 = 1 (more: --store postgres) */
    const char *store;               /* "sqlite" (NULL: the default, DIR/serve/incidents.db) or "postgres" (a
                                      * private server under DIR/pg, lab_pg.c, all controllers on it) */
};

struct vg_lab_info {
    char dir[512];
    char conf[600];                  /* DIR/etc/slurm.conf: SLURM_CONF for clients */
    int nodes, spares, rack_size, port_base;
    int gpus;                        /* per node, as Slurm knows them (0: no Gres) */
    char gpu[32];                    /* the nodes' GPU vendors, as given ("nvidia", "amd", "nvidia,amd") */
    bool nvl72;
    long up_ms;                      /* from the call to all nodes idle */
    char controller[VG_LAB_CTL_LIST];  /* the lab's `vigil serve` URLs, comma-separated ("" with no_vigil) */
    int controllers;                 /* how many */
    char store[16];                  /* "sqlite" or "postgres" */
    char tools[600];                 /* the burn-in stand-in tools put on PATH, or "" */
};

/* Brings the lab up (a lab already in dir is taken down first).  Returns 0;
 * -1 when it failed (err: one line, with the tail of the log at fault; the
 * half-started lab is taken down); -2 for bad options or a dir that is
 * neither empty, absent nor a lab. */
int vg_lab_up(const struct vg_lab_opts *o, struct vg_lab_info *info, char *err, size_t errlen);
/* Stops every process of the lab (its daemons, anything carrying its tag, and
 * their descendants: SIGTERM, then SIGKILL after a grace) and removes dir.
 * 0; -2 when dir is not a lab (absent, or no marker: nothing touched); -1
 * else, e.g. when a daemon the lab started still runs from dir (then dir is
 * kept, and err names the daemon).  dir is made canonical first. */
int vg_lab_down(const char *dir, char *err, size_t errlen);
bool vg_lab_is_lab(const char *dir);
/* Reads the lab's marker into info; 0 or -1. */
int vg_lab_info(const char *dir, struct vg_lab_info *info);

struct vg_lab_daemon {
    char name[32];                   /* "munged", "slurmctld", "slurmd", … */
    char node[64];                   /* "" for cluster-wide daemons */
    pid_t pid;
    bool alive;
};
/* The daemons the lab started, with whether each still runs. */
int vg_lab_daemons(const char *dir, struct vg_lab_daemon **d, size_t *n);
/* One of the lab's controllers: its URL and the pid of its `vigil serve`
 * (0 when not recorded), alive or not. */
struct vg_lab_ctl {
    char url[64];
    pid_t pid;
    bool alive;                      /* the pid runs and carries the lab's tag */
};
/* The lab's controllers in the order of the marker's URL list (controller 1
 * is the daemon "serve" of no node, controller k > 1 that of "ck"; the last
 * one so recorded), at most max;
 * their number. */
size_t vg_lab_controllers(const char *dir, struct vg_lab_ctl *c, size_t max);
/* PIDs of the lab's live processes: those carrying its tag, and its
 * slurmstepds (found by their open files under dir); not their descendants. */
int vg_lab_tagged(const char *dir, pid_t **pids, size_t *n);
/* dir made canonical into out (n bytes, PATH_MAX is enough): the real path of
 * the directory, or of its parent and its name when it does not exist yet;
 * never a trailing slash.  What every lab function is given, since the tag
 * every daemon carries is this path.  0, or -1 (errno) when neither resolves. */
int vg_lab_canon_dir(const char *dir, char *out, size_t n);
/* dir when given, else $VIGIL_LAB, else VG_LAB_DEFAULT_DIR, made canonical
 * into buf (as given, less trailing slashes, when its parent is missing too);
 * returns buf. */
const char *vg_lab_resolve_dir(const char *dir, char *buf, size_t n);
/* Starts those of a node's daemons (node_daemons[]: slurmd, …) that are not
 * running, e.g. after a crash drill.  Returns 0, or -1 (err set). */
int vg_lab_node_start(const char *dir, const char *node, char *err, size_t errlen);
/* Starts the lab's controller k (1..K, as vg_lab_controllers lists them)
 * again on its own port when it is not running, e.g. after a controller-crash
 * drill.  0, or -1 (err set). */
int vg_lab_serve_start(const char *dir, int k, char *err, size_t errlen);
/* The pid of a lab node's running node daemon, 0 when none runs. */
pid_t vg_lab_node_daemon(const char *dir, const char *node);
/* The environment of a command run as lab node `node` (what its agent
 * gets): VIGIL_NODE, VIGIL_BURNIN_STATE (nodes/NODE/burnin-state, read by the
 * burn-in stand-in tools) and its GPUs' fake library: on an NVIDIA node
 * FAKE_NVML_STATE (nodes/NODE/nvml-state) and VIGIL_NVML_LIB, on an AMD node
 * FAKE_AMDSMI_STATE (nodes/NODE/amdsmi-state) and VIGIL_AMDSMI_LIB (each
 * library unless already set).  env gets the entries, NULL-terminated; their
 * text lives in buf.  0, or -1 when buf is too small. */
int vg_lab_node_env(const char *dir, const char *node, char *buf, size_t n, const char *env[6]);
/* The GPU vendor of a lab node: "amd" (its GPUs are the fake AMD SMI's:
 * nodes/NODE/amdsmi-state) or "nvidia". */
const char *vg_lab_node_gpu(const char *dir, const char *node);
/* The lab's agents probe the NIC every this many seconds (deadline: half of
 * it): a NIC hung while a probe ran is reported up to this long after. */
#define VG_LAB_NIC_PROBE_S 2
/* lab_hw.c: a node's simulated NIC (nodes/N/sys, nodes/N/verbs-state) and,
 * rack > 0, its GPUs' registration in that NVLink rack's fabric (the fake
 * NVML's state).  0, or -1 with err. */
int vg_lab_node_hw(const char *dir, const char *node, int rack, char *err, size_t errlen);
/* The NVLink domain the fabric of an NVL72-shaped lab's rack gives its nodes. */
void vg_lab_rack_domain(int rack, char *buf, size_t n);
/* lab_pg.c: the newest PostgreSQL server's bin directory into out; 0, or -1
 * when none is installed. */
int vg_lab_pg_bin(char *out, size_t n);
/* Starts the lab's private PostgreSQL server under DIR/pg (initdb, pg_ctl
 * start -w, as VG_LAB_PG_USER under root), env added to its environment (the
 * lab's tag); *pid gets the server's.  0, or -1 with err (the program's own
 * words). */
int vg_lab_pg_start(const char *dir, const char *const env[], pid_t *pid, char *err, size_t errlen);
/* The libpq conninfo of that server's database. */
void vg_lab_pg_conninfo(const char *dir, char *out, size_t n);
/* pg_ctl stop -m fast on the server of DIR/pg, if one runs; 0, or -1 (err). */
int vg_lab_pg_stop(const char *dir, char *err, size_t errlen);
/* "export SLURM_CONF=…\nexport VIGIL_LAB=…\n" (and VIGIL_CONTROLLER=URL[,URL…] and
 * VIGIL_READ_TOKEN when the lab runs vigil; PATH with the burn-in stand-in
 * tools first when the lab found them), malloc'd. */
char *vg_lab_env(const char *dir);

#endif
