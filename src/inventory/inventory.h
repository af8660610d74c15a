/* inventory.h — what is installed on a node (or a root directory): a list of
 * components, each with its version and where the version came from.
 * Collectors (one file per component family, src/inventory/col_*.c) fill it;
 * they are listed in the table in collectors.c. */
#ifndef VG_INVENTORY_H
#define VG_INVENTORY_H
#include "core/version.h"
#include <stdbool.h>
#include <stddef.h>

/* Canonical component ids (shared with the advisory database):
 * os, linux-kernel, nvidia-driver, cuda-toolkit, cuda-driver, nccl, cudnn,
 * nvidia-container-toolkit, libnvidia-container, gpu-operator, runc, containerd,
 * docker, kubelet, dcgm, dcgm-exporter, fabricmanager, slurm, munge, pmix,
 * enroot, pyxis, apptainer, mlnx-ofed, doca-ofed, rdma-core, connectx-firmware,
 * bluefield-firmware, openssh, sudo, glibc, polkit, nvhpc, qemu, rocm, amdgpu-driver, amd-vbios. */
/* The CVE ids a distribution package's changelog names, each with the version
 * of the entry that names it (entries at or below the installed version only). */
struct vg_cl_cve {
    char cve[24];
    char version[64];
};
struct vg_changelog {
    struct vg_cl_cve *v;
    size_t n;
    char path[160];        /* what was read ("/usr/share/doc/…/changelog.Debian.gz",
                              "rpm -q --changelog NAME"), "" when the package has none */
    bool read;             /* asked for already (vg_inventory_changelogs) */
    char newest[16];       /* the date of its newest entry at or below the installed version
                              ("YYYY-MM-DD": when the package was last built), "" unknown */
};

struct vg_component {
    char name[48];         /* canonical id, above */
    char version[128];     /* the version as found */
    char upstream[96];     /* upstream part (distro epoch/revision stripped) */
    enum vg_ecosystem eco; /* how `version` compares */
    char package[96];      /* distribution package name, when from a package db */
    char source[256];      /* where it came from: "/proc/driver/nvidia/version",
                              "dpkg:/var/lib/dpkg/status", "file:/usr/local/cuda-12.2/version.json" */
    char detail[128];      /* e.g. "/usr/local/cuda-12.2", "mlx5_0 board MT_0000000838" */
    char srcpkg[64];       /* the distribution's source package ("glibc" for libc6), when from a package db */
    char distro[40];       /* the OSV ecosystem of the node's distribution ("Debian:12", "Ubuntu:22.04"),
                              set on package components; "" when unknown */
    struct vg_changelog changelog; /* CVEs the package's own changelog names, read only when
                                      an audit asks (vg_inventory_changelogs) */
    char model[32];        /* device model (NIC firmware: "ConnectX-7"; ROCm: the node's Instinct part,
                              "MI300X"), "" when unknown */
    char upstream_why[192];/* why no distribution package decides although one should
                              (the running kernel's package not installed), "" else;
                              the note of the component's upstream findings */
};

struct vg_pkg {
    char *name, *version, *arch;
    char *src;             /* source package (dpkg "Source:", first word), "" when the same as name */
    enum vg_ecosystem eco; /* dpkg or rpm */
};

struct vg_inventory {
    const char *root;      /* "/" or the --root directory */
    char hostname[64];
    char os_id[32], os_version_id[32], os_pretty[96];
    char kernel[128];
    struct vg_component *items;
    size_t n, cap;
    struct vg_pkg *pkgs;   /* the package database(s), sorted by name */
    size_t npkgs;
    char pkgdb_source[256];/* "dpkg:/var/lib/dpkg/status" / "rpm:/var/lib/rpm" / "" */
    char rpm_db[64];       /* the rpm database directory under root, "" when none was read */
    char *rpm_root;        /* root as an absolute path (rpm --root wants one), malloc'd */
    size_t pkgcap;
    char **bufs;           /* file/command buffers the pkgs' strings point into */
    size_t nbufs;
    char err[512];         /* why collecting failed: one line naming the file */
};

/* Sets inv->err from a format; returns -1. */
int vg_inventory_fail(struct vg_inventory *inv, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

struct vg_pkg_rule;

struct vg_collector {
    const char *name;      /* "nvidia-driver" … */
    /* Adds components to inv (NULL when the rules below say it all).  Returns
     * 0, or -1 for an input error with inv->err set (vg_inventory_fail; the
     * audit then exits 2). */
    int (*collect)(struct vg_inventory *inv);
    /* Components read from the package database, applied before collect. */
    const struct vg_pkg_rule *rules;
    size_t nrules;
};

void vg_inventory_init(struct vg_inventory *inv, const char *root);
void vg_inventory_free(struct vg_inventory *inv);
/* Runs the package-database readers and every collector in table order. */
int vg_inventory_collect(struct vg_inventory *inv);
struct vg_component *vg_inventory_add(struct vg_inventory *inv, const char *name, const char *version,
                                      enum vg_ecosystem eco, const char *source);
const struct vg_pkg *vg_inventory_pkg(const struct vg_inventory *inv, const char *name);
/* The first component with that canonical id, or NULL. */
struct vg_component *vg_inventory_find(struct vg_inventory *inv, const char *name);
/* Packages whose name starts with prefix, in name order: start with *it = 0,
 * returns NULL when done. */
const struct vg_pkg *vg_inventory_pkg_prefix(const struct vg_inventory *inv, const char *prefix, size_t *it);
/* Adds component `name` from the first installed package of the NULL-terminated
 * list (an entry ending in '*' matches a name prefix: "nvidia-driver-*").
 * Version = the package version, upstream = its upstream part, eco = the
 * package ecosystem, source = inv->pkgdb_source.  Returns it, or NULL. */
struct vg_component *vg_inventory_add_pkg(struct vg_inventory *inv, const char *name,
                                          const char *const *pkgnames);
/* A component and the packages that carry it, most specific first. */
struct vg_pkg_rule {
    const char *name;
    const char *pkgs[8]; /* NULL-terminated (so at most 7) */
};
/* vg_inventory_add_pkg for each rule; returns how many were found. */
int vg_inventory_add_pkg_rules(struct vg_inventory *inv, const struct vg_pkg_rule *rules, size_t n);

/* Package-database readers (pkgdb_dpkg.c, pkgdb_rpm.c): each returns 0 (also
 * when the root has no such database) or -1 with inv->err naming the file.
 * vg_dpkg_parse parses a status file held in buf (len bytes, buf[len] == 0) in
 * place; the packages' strings point into buf, which must outlive inv (the
 * loader hands it to inv->bufs).  `path` names the file in messages. */
int vg_dpkg_parse(struct vg_inventory *inv, char *buf, size_t len, const char *path);
int vg_pkgdb_dpkg_load(struct vg_inventory *inv);
/* Parses `rpm -qa` output lines "NAME\tEPOCH:VERSION-RELEASE\tARCH" in place. */
int vg_rpm_parse(struct vg_inventory *inv, char *buf);
int vg_pkgdb_rpm_load(struct vg_inventory *inv);
/* Debian changelogs (changelog_deb.c).  vg_deb_changelog_parse reads the
 * text of a changelog.Debian file: for every entry whose version is <= installed
 * (dpkg order), the CVE ids its lines name; appends them to cl.
 * vg_deb_changelog_load reads /usr/share/doc/PKG/changelog.Debian.gz under
 * root (absent: 0 with cl->n == 0); -1 with a message in err when the file is
 * there but not a readable gzip file. */
void vg_deb_changelog_parse(const char *text, size_t len, const char *installed, struct vg_changelog *cl);
int vg_deb_changelog_load(const char *root, const char *pkg, const char *installed, struct vg_changelog *cl,
                          char *err, size_t errlen);
/* rpm changelogs (changelog_rpm.c).  vg_rpm_changelog_parse reads the text
 * `rpm -q --changelog` prints for one package: for every entry whose version
 * is <= installed (rpm order, distribution tags and epoch left out:
 * vg_rpm_changelog_counts), the CVE ids its lines name; appends them to cl.
 * vg_rpm_changelogs_split hands the output of the loader's `rpm -q --qf`
 * (each package's part after a line "**vigil NAME") to the components of
 * that package.  vg_rpm_changelogs_load runs that rpm once for the n
 * components (inv->rpm_db must be set); -1 with a warning when rpm could not
 * be run (the changelogs then say nothing). */
void vg_rpm_changelog_parse(const char *text, size_t len, const char *installed, struct vg_changelog *cl);
bool vg_rpm_changelog_counts(const char *entry, const char *installed);
void vg_rpm_changelogs_split(struct vg_component *const *comps, size_t n, const char *out, size_t len);
int vg_rpm_changelogs_load(struct vg_inventory *inv, struct vg_component *const *comps, size_t n);
/* Shared by both (changelog.c): records the CVE ids of one line with the entry's version. */
void vg_changelog_scan_line(const char *l, size_t len, const char *version, struct vg_changelog *cl);
/* Keeps the newest entry date: day, month name ("May") and year as an entry
 * writes them; a date that is not one is ignored. */
void vg_changelog_saw_date(struct vg_changelog *cl, int day, const char *mon, int year);
/* Reads the changelogs of these package components (dpkg: the file; rpm: one
 * rpm run for all), once each; a changelog that cannot be read is warned
 * about and says nothing. */
void vg_inventory_changelogs(struct vg_inventory *inv, struct vg_component *const *comps, size_t n);
/* The version of the changelog entry naming cve, or NULL. */
const char *vg_changelog_names(const struct vg_changelog *cl, const char *cve);
void vg_changelog_free(struct vg_changelog *cl);

/* Sorts inv->pkgs by name (the readers call it). */
void vg_inventory_sort_pkgs(struct vg_inventory *inv);

/* Helpers for collectors. */
/* Copies the first dotted version ("535.129.03", "2.18.5") found in s into buf;
 * false when there is none. */
bool vg_scan_version(const char *s, char *buf, size_t n);
/* Looks for a library "<stem>X.Y.Z" (stem like "libnccl.so.") in the usual
 * library directories of the root; on success copies "X.Y.Z" into ver and the
 * file's path into path.  */
bool vg_find_lib_version(const char *root, const char *stem, char *ver, size_t vn, char *path, size_t pn);
/* The same in one directory. */
bool vg_find_lib_in(const char *root, const char *dir, const char *stem, char *ver, size_t vn, char *path, size_t pn);
/* Reads "#define NAME value" integers from a C header: vals[i] for names[i]
 * (-1 when absent).  Returns how many were found. */
int vg_header_defines(const char *root, const char *path, const char *const *names, long *vals, int n);

/* The CUDA toolkits installed under /usr/local: the names of the
 * /usr/local/cuda* directories that are not symlinks ("cuda-13.0"), sorted;
 * returns the count (free with vg_free_list) or -1. */
int vg_cuda_dirs(const char *root, char ***names);

/* Versions in text left on disk (versiontext.c). */
/* nvcc's banner ("Cuda compilation tools, release 13.0, V13.0.88"): the
 * release ("13.0") and nvcc's build ("13.0.88", "" when absent). */
bool vg_nvcc_banner(const char *text, size_t len, char *release, size_t rn, char *build, size_t bn);
/* A wheel's METADATA: the Name and Version headers (false when either is
 * missing or the version does not start with a digit). */
bool vg_wheel_metadata(const char *text, size_t len, char *name, size_t nn, char *version, size_t vn);
/* cuda.h's CUDA_VERSION (13000, 12040) as "13.0", "12.4". */
bool vg_cuda_version_code(long code, char *out, size_t n);

/* A NIC model name as a comparable key: "ConnectX-6 DX", "ConnectX 6 Dx" and
 * "ConnectX6-DX" are all "cx6dx", "BlueField-3" is "bf3"; "" when the name
 * is no ConnectX or BlueField model ("ConnectX GA", "N/A"). */
void vg_nic_model_key(const char *name, char *key, size_t n);

/* AMD Instinct GPUs (amdparts.c). */
struct vg_amd_gpu {
    char bdf[16];          /* 0000:0c:00.0 */
    unsigned device;       /* PCI device id (0x74a1) */
    char part[16];         /* "MI300X" */
    char vbios[64];        /* sysfs vbios_version ("113-M3000100-102"), "" when unreadable */
};
/* The Instinct GPUs under root's /sys/bus/pci/devices (vendor 0x1002, a
 * device id of a known part), in PCI address order; at most max.  Returns
 * the count. */
size_t vg_amd_gpus(const char *root, struct vg_amd_gpu *gpus, size_t max);
/* The part of an Instinct PCI device id ("MI300X" for 0x74a1), or NULL. */
const char *vg_amd_part_for_device(unsigned device);
/* A part name as a comparable key: "AMD Instinct™ MI300X", "MI300X-HF" and
 * "mi300x" are all "mi300x"; "" when the name holds no "MI<digits>" part. */
void vg_amd_part_key(const char *name, char *key, size_t n);

/* The collector table (collectors.c). */
extern const struct vg_collector *const vg_collectors[];
extern const size_t vg_ncollectors;

#endif
