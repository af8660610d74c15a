/* checks.h — the checks of `vigil check`, NHC-style: one table of entries
 * (name, its keys, how many positional words, a run function and an --init
 * function), one file per family (check_gpu.c, check_ib.c, check_node.c,
 * check_pcie.c, check_fabric.c).  A new check is one entry in checks.c plus its file and
 * test.  checkrun.c runs the lines of a config under the watchdog. */
#ifndef VG_CHECKS_H
#define VG_CHECKS_H
#include "signal/checkconf.h"
#include "core/event.h"
#include "signal/gpuprobe.h"
#include "util/sbuf.h"
#include <jansson.h>
#include <stdbool.h>

struct vg_check_result {
    char name[96];             /* "gpu ecc_dbe", "ib mlx5_0:1 state", "mount /scratch" */
    bool ok;
    bool starved;              /* not ok only because its probe was starved of CPU: no verdict on the node */
    char detail[512];
    int line;                  /* the config line, 0 for implicit checks */
    struct vg_event *ev;       /* the events behind a failure (malloc'd) */
    int nev;
};

struct vg_check_results {
    struct vg_check_result *r;
    size_t n, cap;
    char fabric_domain[64];    /* the NVLink domain the GPUs registered in, when a GPU line read them */
};

struct vg_check_ctx {
    const char *root;          /* --root, or NULL */
    const char *node;          /* the node name (for events) */
    const struct vg_gpu_probe_result *gpus;   /* GPU checks (and the defaults hooks) only */
    const struct vg_gpu_vendor *const *vendors;   /* the GPU vendors (NULL: the table) */
    const char *const *daemons;               /* the scheduler's node daemons, NULL-terminated, or NULL */
};

struct vg_check {
    const char *name;
    /* Allowed keys as "key=TYPE": TYPE is "int" (>= 0), "*" (any text) or
     * literals separated by '|'.  NULL-terminated. */
    const char *const *keys;
    const char *required;      /* a key that must be given, or NULL */
    int min_words, max_words;  /* positional words */
    bool gpu;                  /* evaluated on the GPU probe's result, in the parent */
    void (*run)(const struct vg_check_ctx *ctx, const struct vg_check_line *l, struct vg_check_results *out);
    /* --init: appends "* || …" lines describing this (healthy) node. */
    void (*init)(const struct vg_check_ctx *ctx, struct sbuf *out);
    /* With no config at all: the lines that hold on any healthy node with
     * what this node has (no model, version or rate pinned); NULL: none. */
    void (*defaults)(const struct vg_check_ctx *ctx, struct sbuf *out);
};

extern const struct vg_check *const vg_checks[];
const struct vg_check *vg_check_find(const char *name);
/* Checks every line's check name, keys, values and words; -1 with
 * "FILE:LINE: what" in err at the first bad one. */
int vg_check_validate(const struct vg_checkconf *c, char *err, size_t errlen);

/* Appends a result (detail printf-style); returns it, to attach events. */
struct vg_check_result *vg_check_add(struct vg_check_results *rs, const struct vg_check_line *l, bool ok,
                                     const char *name, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
void vg_check_add_event(struct vg_check_result *r, const struct vg_event *e);
void vg_check_results_free(struct vg_check_results *rs);
json_t *vg_check_result_to_json(const struct vg_check_result *r);
int vg_check_result_from_json(const json_t *j, struct vg_check_result *r);
/* "yes"/"no" style values → bool. */
bool vg_check_is_no(const char *v);

/* The families (each in its own file). */
extern const struct vg_check vg_check_gpu, vg_check_ib, vg_check_driver, vg_check_mount, vg_check_service,
    vg_check_pcie, vg_check_fabric;

/* The implicit "gpu responsive" result: every GPU library present opens, no
 * GPU lost, no probe hung (with gpu-lost / probe-hung events). */
void vg_check_gpu_responsive(const struct vg_check_ctx *ctx, struct vg_check_results *out);

#endif
