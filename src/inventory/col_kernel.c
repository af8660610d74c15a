/* col_kernel.c — the running kernel as the distribution's package: the
 * release col_os.c read (/proc/sys/kernel/osrelease) is mapped to the
 * distribution's kernel source package and version, so that the
 * distribution's kernel advisories (USN, DSA) can be matched:
 *   - the installed image package of that release (linux-image-REL,
 *     linux-image-unsigned-REL): Debian 6.1.0-18-amd64 → linux 6.1.76-1;
 *   - else Ubuntu's /proc/version_signature ("Ubuntu 6.8.0-120.120-generic
 *     6.8.12"): 6.8.0-120-generic → linux 6.8.0-120.120, upstream 6.8.12.
 * Ubuntu's source package follows the flavour and the HWE suffix: generic →
 * linux, aws → linux-aws, nvidia on 22.04 (6.8.0-1055.58~22.04.1) →
 * linux-nvidia-6.8.  A livepatch module loaded (/sys/kernel/livepatch) is
 * noted in the component's detail.  Without either source the component
 * keeps the release string. */
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

static int collect(struct vg_inventory *inv)
{
    struct vg_component *k = vg_inventory_find(inv, "linux-kernel");
    if (!k || !k->version[0]) return 0;
    char rel[64], lp[256], srcpkg[64];
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
        return 0;
    }
    k->eco = VG_ECO_DPKG;
    vg_strlcpy(k->srcpkg, srcpkg, sizeof k->srcpkg);
    if (sig_up[0]) vg_strlcpy(k->upstream, sig_up, sizeof k->upstream);
    else vg_version_upstream(VG_ECO_DPKG, k->version, k->upstream, sizeof k->upstream);
    livepatch(inv, lp, sizeof lp);
    snprintf(k->detail, sizeof k->detail, "running %s%.*s", rel, (int)(sizeof k->detail - 9 - strlen(rel)), lp);
    return 0;
}

const struct vg_collector vg_col_kernel = { "kernel", collect, NULL, 0 };
