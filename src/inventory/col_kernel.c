/* col_kernel.c — the running kernel as the distribution's package: the
 * release col_os.c read (/proc/sys/kernel/osrelease) is mapped to the
 * distribution's kernel source package and version, so that the
 * distribution's kernel advisories (USN, DSA) or the package's changelog can
 * decide:
 *   - the installed image package of that release (linux-image-REL,
 *     linux-image-unsigned-REL): Debian 6.1.0-18-amd64 → linux 6.1.76-1;
 *   - else Ubuntu's /proc/version_signature ("Ubuntu 6.8.0-120.120-generic
 *     6.8.12"): 6.8.0-120-generic → linux 6.8.0-120.120, upstream 6.8.12;
 *   - else, on an rpm node (AlmaLinux, RHEL, Rocky), the installed instance of
 *     kernel-core (RHEL 8/9 family; else kernel) whose VERSION-RELEASE.ARCH
 *     is the release: 5.14.0-427.13.1.el9_4.x86_64 → kernel-core
 *     5.14.0-427.13.1.el9_4 (source kernel, upstream 5.14.0), so its
 *     changelog can decide; a variant "+debug" is kernel-debug-core.  When
 *     no installed instance carries the release (booted, then removed), the
 *     release is compared upstream and the component and its findings say
 *     why.
 * Ubuntu's source package follows the flavour and the HWE suffix: generic →
 * linux, aws → linux-aws, nvidia on 22.04 (6.8.0-1055.58~22.04.1) →
 * linux-nvidia-6.8.  A livepatch module loaded (/sys/kernel/livepatch) is
 * noted in the component's detail (RHEL's kpatch modules too).  Without any
 * of these the component keeps the release string. */
#include "inventory/inventory.h"
#include "util/rootfs.h"
#include "util/strutil.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "linux-signed-amd64" (Debian) → "linux"; "linux-signed-hwe-6.8" (Ubuntu) → "linux-hwe-6.8". */
static void source_from_signed(const char *src, bool debian, char *out, size_t n)
{
    if (!vg_startswith(src, "linux-signed")) vg_strlcpy(out, src, n);
    else if (debian || !src[12]) vg_strlcpy(out, "linux", n);
    else snprintf(out, n, "linux%s", src + 12);
}

/* Ubuntu's source package for a flavour ("generic", "nvidia-64k") and version. */
static void ubuntu_source(const char *flavour, const char *version, char *out, size_t n)
{
    char fl[48];
    vg_strlcpy(fl, flavour, sizeof fl);
    if (vg_endswith(fl, "-64k")) fl[strlen(fl) - 4] = 0;
    bool main_line = !strcmp(fl, "generic") || !strcmp(fl, "lowlatency");
    const char *tilde = strchr(version, '~');
    if (!tilde) {
        snprintf(out, n, "linux%s%s", main_line ? "" : "-", main_line ? "" : fl);
        return;
    }
    int mm = (int)strcspn(version, "-");   /* "6.8.0" → "6.8" */
    const char *dot2 = memchr(version, '.', (size_t)mm);
    if (dot2) dot2 = memchr(dot2 + 1, '.', (size_t)(version + mm - dot2 - 1));
    if (dot2) mm = (int)(dot2 - version);
    snprintf(out, n, "linux-%s-%.*s", main_line ? "hwe" : fl, mm, version);
}

/* "; livepatch lp_6_8_0_120 enabled" for each enabled module ("" when none). */
static void livepatch(struct vg_inventory *inv, char *buf, size_t n)
{
    char **names;
    int k = vg_list_dir(inv->root, "/sys/kernel/livepatch", &names);
    buf[0] = 0;
    for (int i = 0; i < k; i++) {
        char path[300], val[16];
        snprintf(path, sizeof path, "/sys/kernel/livepatch/%s/enabled", names[i]);
        if (vg_read_line(inv->root, path, val, sizeof val) == 0 && !strcmp(val, "1")) {
            size_t l = strlen(buf);
            snprintf(buf + l, n - l, "%slivepatch %s enabled", l ? ", " : "; ", names[i]);
        }
    }
    if (k >= 0) vg_free_list(names, k);
}

/* The installed instance of rpm package `name` whose VERSION-RELEASE.ARCH is
 * rel (its first rl bytes), or NULL.  Several kernels are installed at once. */
static const struct vg_pkg *rpm_instance(const struct vg_inventory *inv, const char *name, const char *rel, size_t rl)
{
    size_t it = 0;
    for (const struct vg_pkg *p; (p = vg_inventory_pkg_prefix(inv, name, &it));) {
        if (strcmp(p->name, name) || p->eco != VG_ECO_RPM) continue;
        const char *v = p->version, *colon = strchr(v, ':');
        if (colon) v = colon + 1;   /* a release (uname -r) carries no epoch */
        size_t vl = strlen(v), al = strlen(p->arch);
        if (vl + 1 + al == rl && !strncmp(rel, v, vl) && rel[vl] == '.' && !strncmp(rel + vl + 1, p->arch, al)) return p;
    }
    return NULL;
}

/* The running release on an rpm node: the kernel-core (else kernel) package
 * carrying it becomes the component, or upstream_why says why there is none. */
static void rpm_kernel(struct vg_inventory *inv, struct vg_component *k, const char *rel)
{
    const char *plus = strchr(rel, '+');   /* "…x86_64+debug" → kernel-debug-core */
    char var[16] = "", core[32], plain[32];
    if (plus) snprintf(var, sizeof var, "-%.12s", plus + 1);
    snprintf(core, sizeof core, "kernel%s-core", var);
    snprintf(plain, sizeof plain, "kernel%s", var);
    size_t rl = plus ? (size_t)(plus - rel) : strlen(rel);
    const struct vg_pkg *p = rpm_instance(inv, core, rel, rl);
    if (!p) p = rpm_instance(inv, plain, rel, rl);
    if (!p) {
        snprintf(k->upstream_why, sizeof k->upstream_why, "no installed %s or %s package carries the running %.63s",
                 core, plain, rel);
        snprintf(k->detail, sizeof k->detail, "its %s package is not installed: compared upstream", core);
        return;
    }
    vg_strlcpy(k->version, p->version, sizeof k->version);
    vg_strlcpy(k->package, p->name, sizeof k->package);
    vg_strlcpy(k->source, inv->pkgdb_source, sizeof k->source);
    vg_strlcpy(k->srcpkg, p->src && *p->src ? p->src : p->name, sizeof k->srcpkg);
    k->eco = VG_ECO_RPM;
    vg_version_upstream(VG_ECO_RPM, k->version, k->upstream, sizeof k->upstream);
}

/* "running REL" and the livepatch modules enabled. */
static void running_detail(struct vg_inventory *inv, struct vg_component *k, const char *rel)
{
    char lp[256];
    livepatch(inv, lp, sizeof lp);
    snprintf(k->detail, sizeof k->detail, "running %s%.*s", rel, (int)(sizeof k->detail - 9 - strlen(rel)), lp);
}

static int collect(struct vg_inventory *inv)
{
    struct vg_component *k = vg_inventory_find(inv, "linux-kernel");
    if (!k || !k->version[0]) return 0;
    char rel[64], srcpkg[64];
    vg_strlcpy(rel, k->version, sizeof rel);
    bool debian = !strcmp(inv->os_id, "debian");
    const struct vg_pkg *img = NULL;
    static const char *const prefixes[] = { "linux-image-", "linux-image-unsigned-" };
    for (size_t i = 0; i < 2 && !img; i++) {
        char name[160];
        snprintf(name, sizeof name, "%s%s", prefixes[i], rel);
        img = vg_inventory_pkg(inv, name);
    }
    char sig[256], sig_up[96] = "";
    bool have_sig = vg_read_line(inv->root, "/proc/version_signature", sig, sizeof sig) == 0 && vg_startswith(sig, "Ubuntu ");
    if (have_sig) {   /* the real upstream version is its third field */
        const char *last = strrchr(sig, ' ');
        if (last && last > sig + 7) vg_strlcpy(sig_up, last + 1, sizeof sig_up);
    }
    if (img) {
        source_from_signed(img->src && *img->src ? img->src : "linux", debian, srcpkg, sizeof srcpkg);
        vg_strlcpy(k->version, img->version, sizeof k->version);
        vg_strlcpy(k->package, img->name, sizeof k->package);
        vg_strlcpy(k->source, inv->pkgdb_source, sizeof k->source);
    } else if (have_sig) {
        /* "Ubuntu 6.8.0-120.120-generic 6.8.12" */
        char *ver = sig + 7, *sp = strchr(ver, ' ');
        if (!sp) return 0;
        *sp = 0;
        char *fl = strchr(ver, '-');
        fl = fl ? strchr(fl + 1, '-') : NULL;   /* the flavour starts at the second '-' */
        if (!fl) return 0;
        *fl++ = 0;
        ubuntu_source(fl, ver, srcpkg, sizeof srcpkg);
        vg_strlcpy(k->version, ver, sizeof k->version);
        snprintf(k->package, sizeof k->package, "linux-image-%.80s", rel);
        vg_strlcpy(k->source, "/proc/version_signature", sizeof k->source);
    } else {
        if (inv->rpm_db[0]) {
            rpm_kernel(inv, k, rel);
            if (k->package[0]) running_detail(inv, k, rel);
        }
        return 0;
    }
    k->eco = VG_ECO_DPKG;
    vg_strlcpy(k->srcpkg, srcpkg, sizeof k->srcpkg);
    if (sig_up[0]) vg_strlcpy(k->upstream, sig_up, sizeof k->upstream);
    else vg_version_upstream(VG_ECO_DPKG, k->version, k->upstream, sizeof k->upstream);
    running_detail(inv, k, rel);
    return 0;
}

const struct vg_collector vg_col_kernel = { "kernel", collect, NULL, 0 };
