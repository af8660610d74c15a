/* import.c — the importer table, file and directory walking (*.json, and
 * *.list for the Debian tracker's lists), the import report, and the
 * package-name → component table the importers share. */
#include "advisory/importer.h"
#include "util/rootfs.h"
#include "util/strutil.h"
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const struct vg_importer *const importers[] = {
    &vg_importer_csaf,
    &vg_importer_osv,
    &vg_importer_vigil,
    &vg_importer_debian,
    &vg_importer_cve5,
};

/* Package names (OSV, Go modules, distro packages) and product names (CSAF)
 * → canonical component ids.  Compared case-insensitively, whole name. */
static const struct { const char *name, *component; } names[] = {
    { "github.com/opencontainers/runc", "runc" },
    { "runc", "runc" },
    { "github.com/containerd/containerd", "containerd" },
    { "github.com/containerd/containerd/v2", "containerd" },
    { "containerd", "containerd" },
    { "containerd.io", "containerd" },
    { "github.com/docker/docker", "docker" },
    { "github.com/moby/moby", "docker" },
    { "docker-ce", "docker" },
    { "moby-engine", "docker" },
    { "k8s.io/kubernetes", "kubelet" },
    { "kubelet", "kubelet" },
    { "slurm", "slurm" },
    { "slurm-wlm", "slurm" },
    { "munge", "munge" },
    { "openpmix", "pmix" },
    { "pmix", "pmix" },
    { "github.com/apptainer/apptainer", "apptainer" },
    { "apptainer", "apptainer" },
    { "kernel", "linux-kernel" },
    { "linux", "linux-kernel" },
    { "openssh", "openssh" },
    { "sudo", "sudo" },
    { "glibc", "glibc" },
    { "polkit", "polkit" },
    { "enroot", "enroot" },
    { "pyxis", "pyxis" },
    { "rdma-core", "rdma-core" },
    { "qemu", "qemu" },
    { "qemu-kvm", "qemu" },
    { "github.com/nvidia/nvidia-container-toolkit", "nvidia-container-toolkit" },
    { "nvidia container toolkit", "nvidia-container-toolkit" },
    { "nvidia-container-toolkit", "nvidia-container-toolkit" },
    { "github.com/nvidia/libnvidia-container", "libnvidia-container" },
    { "nvidia gpu operator", "gpu-operator" },
    { "github.com/nvidia/gpu-operator", "gpu-operator" },
    { "nvidia cuda toolkit", "cuda-toolkit" },
    { "cuda toolkit", "cuda-toolkit" },
    { "dcgm", "dcgm" },
    { "nvidia dcgm", "dcgm" },
    { "dcgm exporter", "dcgm-exporter" },
    { "nvidia kubernetes device plugin", "k8s-device-plugin" },
    { "nvidia mig manager", "mig-manager" },
    { "nvidia doca-host", "doca-ofed" },
    { "mellanox ofed", "mlnx-ofed" },
};

const char *vg_component_for_name(const char *name)
{
    for (size_t i = 0; name && i < sizeof names / sizeof names[0]; i++)
        if (!strcasecmp(name, names[i].name)) return names[i].component;
    return NULL;
}

/* Source package names of Debian and Ubuntu that differ from the upstream
 * project's name. */
static const struct { const char *name, *component; } distro_names[] = {
    { "policykit-1", "polkit" },   { "docker.io", "docker" }, { "docker.io-app", "docker" },
    { "containerd-app", "containerd" }, { "runc-app", "runc" }, { "slurm-llnl", "slurm" },
    { "nvidia-container-toolkit", "nvidia-container-toolkit" }, { "libnvidia-container", "libnvidia-container" },
};

const char *vg_component_for_distro_package(const char *name)
{
    for (size_t i = 0; name && i < sizeof distro_names / sizeof distro_names[0]; i++)
        if (!strcmp(name, distro_names[i].name)) return distro_names[i].component;
    /* kernel sources: linux, linux-aws, linux-hwe-6.8, linux-nvidia-6.8 … (not firmware, meta, signed) */
    if (name && (!strcmp(name, "linux") || (vg_startswith(name, "linux-") && !vg_startswith(name, "linux-firmware") &&
                                             !vg_startswith(name, "linux-meta") && !vg_startswith(name, "linux-signed") &&
                                             !vg_startswith(name, "linux-restricted"))))
        return "linux-kernel";
    return vg_component_for_name(name);
}

void vg_strlist_add(struct vg_strlist *l, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    l->v = vg_xrealloc(l->v, (l->n + 1) * sizeof *l->v);
    l->v[l->n++] = vg_xstrdup(buf);
}

void vg_strlist_free(struct vg_strlist *l)
{
    for (size_t i = 0; i < l->n; i++) free(l->v[i]);
    free(l->v);
    l->v = NULL;
    l->n = 0;
}

void vg_import_report_free(struct vg_import_report *r)
{
    vg_strlist_free(&r->skipped);
    vg_strlist_free(&r->unparsed);
    vg_strlist_free(&r->warnings);
}

void vg_import_add(struct vg_advdb *db, struct vg_import_report *rep, const struct vg_advisory *a)
{
    struct vg_advisory tagged = *a;
    if (!tagged.source[0] && rep->source) vg_strlcpy(tagged.source, rep->source, sizeof tagged.source);
    int added = vg_advdb_add(db, &tagged);
    rep->advisories++;
    rep->ranges_added += added;
    if (!added) rep->duplicates++;
}

const struct vg_importer *vg_importer_for(const json_t *doc)
{
    for (size_t i = 0; i < sizeof importers / sizeof importers[0]; i++)
        if (importers[i]->detect && importers[i]->detect(doc)) return importers[i];
    return NULL;
}

/* The text importer whose format the file's text is, or NULL. */
static const struct vg_importer *text_importer_for(const char *text, size_t len)
{
    for (size_t i = 0; i < sizeof importers / sizeof importers[0]; i++)
        if (importers[i]->detect_text && importers[i]->detect_text(text, len)) return importers[i];
    return NULL;
}

static int import_file(const char *path, struct vg_advdb *db, struct vg_import_report *rep, char *err, size_t errlen)
{
    char *text;
    size_t len;
    if (vg_read_file(NULL, path, 256u << 20, &text, &len) < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    const char *before = rep->source;
    int rc = -1;
    const struct vg_importer *ti = text_importer_for(text, len);
    if (ti) {
        if (!rep->source) rep->source = ti->name;
        rc = ti->import_text(text, len, path, db, rep, err, errlen);
        rep->source = before;
        free(text);
        if (rc == 0) rep->files++;
        return rc;
    }
    json_error_t je;
    json_t *doc = json_loadb(text, len, 0, &je);
    free(text);
    if (!doc) {
        if (je.line > 0) snprintf(err, errlen, "%s:%d:%d: %s", path, je.line, je.column, je.text);
        else snprintf(err, errlen, "%s: %s", path, je.text);
        return -1;
    }
    const struct vg_importer *imp = vg_importer_for(doc);
    if (imp && !rep->source) rep->source = imp->name;   /* untagged: named after its format */
    if (!imp)
        snprintf(err, errlen, "%s: not a CSAF 2.0, OSV, CVE JSON 5, vigil database or Debian DSA/DLA list document",
                 path);
    else rc = imp->import(doc, path, db, rep, err, errlen);
    rep->source = before;
    if (rc == 0) rep->files++;
    json_decref(doc);
    return rc;
}

int vg_import_path(const char *path, struct vg_advdb *db, struct vg_import_report *rep, char *err, size_t errlen)
{
    struct stat st;
    if (stat(path, &st) < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) return import_file(path, db, rep, err, errlen);
    char **list;
    int n = vg_list_dir(NULL, path, &list);
    if (n < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        char *sub = vg_xmalloc(strlen(path) + strlen(list[i]) + 2);
        sprintf(sub, "%s/%s", path, list[i]);
        struct stat s2;
        if (stat(sub, &s2) == 0 && (S_ISDIR(s2.st_mode) || vg_endswith(list[i], ".json") || vg_endswith(list[i], ".list")))
            rc = vg_import_path(sub, db, rep, err, errlen);
        free(sub);
    }
    vg_free_list(list, n);
    return rc;
}
