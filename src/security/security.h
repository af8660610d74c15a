/* security.h — `vigil audit --security`: tenant-isolation and security
 * posture checks, NHC style.  Each family (sec_slurm.c, sec_infiniband.c,
 * sec_node.c, sec_network.c) is a table of checks {id, title, severity, fix,
 * function}; sec_storage.c: NFS exports, shared-filesystem mounts; sec_devices.c:
 * IOMMU, BlueField RShim; sec_nvlink.c: the IMEX channels and domain;
 * checks.c lists the families and runs them.  A check reports one
 * or more results through vg_sec_emit: pass, warn, fail, or unknown ("could
 * not check": a missing file, permission denied — never a crash, never a
 * silent pass), each with a one-line finding and the evidence it read. */
#ifndef VG_SECURITY_H
#define VG_SECURITY_H
#include "advisory/advisory.h"
#include "orch/slurm.h"
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/stat.h>

enum vg_sec_status { VG_SEC_PASS, VG_SEC_WARN, VG_SEC_FAIL, VG_SEC_UNKNOWN };
const char *vg_sec_status_name(enum vg_sec_status s);

/* A management address a tenant must not reach (--targets FILE, or `target`
 * lines of --config). */
struct vg_sec_target {
    char name[64], host[256];
    int port;
};

/* The site's configuration (--config FILE): one directive per line,
 *   target NAME HOST PORT     a management address (BMC 623/443, switch, SM)
 *   shared DIR                a shared mount whose top and per-user dirs are checked
 *   slurm-conf FILE           slurm.conf (default $SLURM_CONF, /etc/slurm/slurm.conf)
 *   opensm-conf FILE          OpenSM config (default /etc/opensm/opensm.conf)
 *   timeout-ms N              connect timeout for targets (1..1000, default 500)
 * '#' starts a comment. */
struct vg_sec_config {
    struct vg_sec_target *targets;
    size_t ntargets;
    char **shared;
    size_t nshared;
    char *slurm_conf, *opensm_conf;
    int timeout_ms;
};
/* Parses text (name for messages).  Returns 0, or -1 with err "NAME:LINE: what". */
int vg_sec_config_parse(const char *text, const char *name, struct vg_sec_config *c, char *err, size_t errlen);
void vg_sec_config_free(struct vg_sec_config *c);

struct vg_sec_result {
    char *id, *title, *family, *finding, *evidence, *fix;
    enum vg_sec_status status;
    enum vg_severity severity;
};

struct vg_sec_ctx {
    const char *root;                 /* "/" or the --root DIR */
    const struct vg_sec_config *conf;
    bool live_slurm;                  /* may ask a running cluster (scontrol show config) */
    /* Slurm configuration, loaded once by the slurm family */
    bool slurm_loaded;
    struct vg_slurm_kv *slurm;
    size_t nslurm;
    char slurm_source[600];           /* "scontrol show config" or the file read */
    char slurm_conf_path[512];        /* slurm.conf's path (for perms and siblings) */
    char slurm_err[256];              /* why the configuration could not be read */
    struct vg_sec_result *results;
    size_t nresults, cap;
    const char *family;               /* set while a family runs */
};

struct vg_sec_check {
    const char *id, *title;
    enum vg_severity severity;
    const char *fix;
    void (*run)(struct vg_sec_ctx *c, const struct vg_sec_check *k);
};

struct vg_sec_family {
    const char *name;
    const struct vg_sec_check *checks;
    size_t n;
};
extern const struct vg_sec_family vg_sec_slurm, vg_sec_infiniband, vg_sec_node, vg_sec_network, vg_sec_storage,
    vg_sec_devices, vg_sec_nvlink;

/* Records one result of check k.  evidence: what was read (file: value). */
void vg_sec_emit(struct vg_sec_ctx *c, const struct vg_sec_check *k, enum vg_sec_status st, const char *evidence,
                 const char *fmt, ...) __attribute__((format(printf, 5, 6)));

void vg_sec_init(struct vg_sec_ctx *c, const char *root, const struct vg_sec_config *conf);
/* Runs every family (or only those named in the comma list `only`). */
void vg_sec_run(struct vg_sec_ctx *c, const char *only);
void vg_sec_free(struct vg_sec_ctx *c);
/* The result for check id (the first one), or NULL. */
const struct vg_sec_result *vg_sec_find(const struct vg_sec_ctx *c, const char *id);
/* Results with status fail at or above severity sev. */
size_t vg_sec_failures(const struct vg_sec_ctx *c, enum vg_severity sev);


/* Reports (report/security_report.c). */
json_t *vg_sec_json(const struct vg_sec_ctx *c);
void vg_sec_print(const struct vg_sec_ctx *c, FILE *f, bool markdown);

/* Helpers shared by the families (checks.c). */
/* The Slurm configuration: scontrol show config when live_slurm, else the
 * slurm.conf file; false (slurm_err set) when neither could be read. */
bool vg_sec_slurm_conf(struct vg_sec_ctx *c);
/* slurm.rpc-loops on sdiag's counts (the check's judgement, for tests). */
struct vg_sec_check;
void vg_sec_rpc_loops(struct vg_sec_ctx *c, const struct vg_sec_check *k, const struct vg_sdiag *d, const char *slurm_user);
/* stat() under the root; 0 or -1 (errno). */
int vg_sec_stat(const struct vg_sec_ctx *c, const char *path, struct stat *st);
/* "0640 root:slurm" for evidence. */
void vg_sec_mode_str(const struct stat *st, char *buf, size_t n);
struct sbuf;
/* A shared directory's exposure: appends "DIR MODE" (and each exposed
 * subdirectory) to e and what is wrong to bad — the directory world-writable
 * without the sticky bit, subdirectories (other users' data) readable by
 * everyone.  Returns how many problems, or -1 when dir is not a directory. */
int vg_sec_dir_exposure(const struct vg_sec_ctx *c, const char *dir, struct sbuf *e, struct sbuf *bad);
/* The name of uid/gid from the root's /etc/passwd, /etc/group ("#123" when unknown). */
void vg_sec_user_name(const struct vg_sec_ctx *c, unsigned uid, char *buf, size_t n);
void vg_sec_group_name(const struct vg_sec_ctx *c, unsigned gid, char *buf, size_t n);

#endif
