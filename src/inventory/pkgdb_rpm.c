/* pkgdb_rpm.c — reads an rpm database through the rpm program, when the root
 * has one (/usr/lib/sysimage/rpm or /var/lib/rpm) and rpm is installed here:
 * `rpm -qa --root ROOT --dbpath DB --qf 'NAME\tEPOCH:VERSION-RELEASE\tARCH\tSOURCERPM\n'`
 * spawned with argv and a timeout (util/spawn.h), output parsed in place.
 * The source rpm gives the source package (openssh for openssh-server), the
 * name a distribution's advisory uses.  The database and the absolute root
 * are kept for the changelog reader. */
#include "inventory/inventory.h"
#include "util/log.h"
#include "util/rootfs.h"
#include "util/spawn.h"
#include "util/strutil.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RPM_TIMEOUT_MS 60000

static const char *const rpm_dbpaths[] = { "/usr/lib/sysimage/rpm", "/var/lib/rpm", NULL };

/* Cuts a source rpm's file name to its package name in place:
 * "openssh-8.7p1-43.el9.src.rpm" → "openssh"; "" for "(none)" or a name
 * without version and release. */
static char *srpm_name(char *s)
{
    char *suffix = strstr(s, ".src.rpm");
    if (!suffix) suffix = strstr(s, ".nosrc.rpm");
    if (!suffix) return (char *)"";
    *suffix = 0;
    for (int dashes = 0; dashes < 2; dashes++) {
        char *d = strrchr(s, '-');
        if (!d || d == s) return (char *)"";
        *d = 0;
    }
    return s;
}

int vg_rpm_parse(struct vg_inventory *inv, char *buf)
{
    for (char *line = buf; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = 0;
        char *f[4];
        int nf = vg_split(line, "\t", f, 4);
        char *ver = nf >= 3 ? f[1] + 2 * vg_startswith(f[1], "0:") : (char *)"";   /* no epoch */
        if (*f[0] && *ver && strcmp(f[0], "gpg-pubkey")) {
            if (nf == 4) f[3][strcspn(f[3], "\t")] = 0;   /* fields past the fourth are ignored */
            char *src = nf == 4 ? srpm_name(f[3]) : (char *)"";
            if (!strcmp(src, f[0])) src = (char *)"";
            if (inv->npkgs == inv->pkgcap) {
                inv->pkgcap = inv->pkgcap ? inv->pkgcap * 2 : 256;
                inv->pkgs = vg_xrealloc(inv->pkgs, inv->pkgcap * sizeof *inv->pkgs);
            }
            inv->pkgs[inv->npkgs++] = (struct vg_pkg){ f[0], ver, f[2], src, VG_ECO_RPM };
        }
        line = nl ? nl + 1 : NULL;
    }
    vg_inventory_sort_pkgs(inv);
    return 0;
}

static bool has_rpmdb(const char *root, const char *dir)
{
    static const char *const files[] = { "rpmdb.sqlite", "Packages", "Packages.db", NULL };
    char path[256];
    for (int i = 0; files[i]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        if (vg_path_exists(root, path)) return true;
    }
    return false;
}

int vg_pkgdb_rpm_load(struct vg_inventory *inv)
{
    const char *db = NULL;
    for (int i = 0; rpm_dbpaths[i] && !db; i++)
        if (has_rpmdb(inv->root, rpm_dbpaths[i])) db = rpm_dbpaths[i];
    if (!db) return 0;
    free(inv->rpm_root);
    inv->rpm_root = realpath(inv->root, NULL);   /* rpm refuses a relative --root */
    if (!inv->rpm_root) inv->rpm_root = vg_xstrdup(inv->root);
    const char *argv[] = { "rpm", "-qa", "--root", inv->rpm_root, "--dbpath", db,
                           "--qf", "%{NAME}\\t%{EPOCHNUM}:%{VERSION}-%{RELEASE}\\t%{ARCH}\\t%{SOURCERPM}\\n", NULL };
    struct vg_spawn_result r;
    int rc = vg_spawn(argv, NULL, NULL, RPM_TIMEOUT_MS, &r);
    if (rc < 0 || r.status == 127) {
        vg_warn("%s: rpm database found but the rpm program could not be run; rpm packages not read", db);
        vg_spawn_result_free(&r);
        return 0;
    }
    if (r.status != 0 || r.timed_out) {
        char *cmd = vg_argv_str(argv);
        char *nl = strchr(r.err, '\n');
        if (nl) *nl = 0;
        vg_inventory_fail(inv, "%s: %s", cmd, r.timed_out ? "timed out" : r.err[0] ? r.err : "failed");
        free(cmd);
        vg_spawn_result_free(&r);
        return -1;
    }
    inv->bufs = vg_xrealloc(inv->bufs, (inv->nbufs + 1) * sizeof *inv->bufs);
    inv->bufs[inv->nbufs++] = r.out;
    r.out = NULL;
    vg_rpm_parse(inv, inv->bufs[inv->nbufs - 1]);
    snprintf(inv->pkgdb_source, sizeof inv->pkgdb_source, "rpm:%s", db);
    vg_strlcpy(inv->rpm_db, db, sizeof inv->rpm_db);
    vg_spawn_result_free(&r);
    return 0;
}
