/* changelog.c — what the Debian and rpm changelog readers share: the per-
 * package list of CVE ids a changelog names (with the version of the entry
 * naming each), the scan of one changelog line for CVE ids, and the reading
 * of the changelogs an audit asks for (vg_inventory_changelogs): only those
 * of packages with an upstream finding the changelog could refute, since a
 * changelog costs a file read (dpkg) or an rpm run. */
#include "inventory/inventory.h"
#include "util/log.h"
#include "util/strutil.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void add(struct vg_changelog *cl, const char *cve, size_t cl_len, const char *version)
{
    for (size_t i = 0; i < cl->n; i++)
        if (strlen(cl->v[i].cve) == cl_len && !memcmp(cl->v[i].cve, cve, cl_len)) {
            vg_strlcpy(cl->v[i].version, version, sizeof cl->v[i].version);   /* entries run newest first: */
            return;                                                           /* the oldest naming it is the fix */
        }
    cl->v = vg_xrealloc(cl->v, (cl->n + 1) * sizeof *cl->v);
    struct vg_cl_cve *c = &cl->v[cl->n++];
    memcpy(c->cve, cve, cl_len);
    c->cve[cl_len] = 0;
    vg_strlcpy(c->version, version, sizeof c->version);
}

void vg_changelog_scan_line(const char *l, size_t len, const char *version, struct vg_changelog *cl)
{
    for (size_t i = 0; i + 13 <= len; i++) {
        if (memcmp(l + i, "CVE-", 4) || (i && isalnum((unsigned char)l[i - 1]))) continue;
        size_t j = i + 4, d = 0;
        while (j < len && isdigit((unsigned char)l[j]) && d < 4) j++, d++;
        if (d != 4 || j >= len || l[j] != '-') continue;
        size_t k = ++j;
        while (j < len && isdigit((unsigned char)l[j]) && j - k < 8) j++;
        if (j - k < 4) continue;
        add(cl, l + i, j - i, version);
        i = j - 1;
    }
}

void vg_changelog_saw_date(struct vg_changelog *cl, int day, const char *mon, int year)
{
    static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
    const char *m = strlen(mon) == 3 ? strstr(months, mon) : NULL;
    if (!m || (m - months) % 3 || day < 1 || day > 31 || year < 1990 || year > 2999) return;
    char ymd[32];
    snprintf(ymd, sizeof ymd, "%04d-%02d-%02d", year, (int)((m - months) / 3) + 1, day);
    if (strcmp(ymd, cl->newest) > 0) vg_strlcpy(cl->newest, ymd, sizeof cl->newest);
}

const char *vg_changelog_names(const struct vg_changelog *cl, const char *cve)
{
    for (size_t i = 0; cl && i < cl->n; i++)
        if (!strcmp(cl->v[i].cve, cve)) return cl->v[i].version;
    return NULL;
}

void vg_changelog_free(struct vg_changelog *cl)
{
    free(cl->v);
    memset(cl, 0, sizeof *cl);
}

void vg_inventory_changelogs(struct vg_inventory *inv, struct vg_component *const *comps, size_t n)
{
    struct vg_component **rpm = vg_xmalloc((n ? n : 1) * sizeof *rpm);
    size_t nrpm = 0;
    for (size_t i = 0; i < n; i++) {
        struct vg_component *c = comps[i];
        if (c->changelog.read || !c->package[0]) continue;
        c->changelog.read = true;
        if (c->eco == VG_ECO_RPM) {
            rpm[nrpm++] = c;
        } else if (c->eco == VG_ECO_DPKG) {
            char err[512];
            if (vg_deb_changelog_load(inv->root, c->package, c->version, &c->changelog, err, sizeof err) < 0)
                vg_warn("%s (changelog not used)", err);
        }
    }
    if (nrpm) vg_rpm_changelogs_load(inv, rpm, nrpm);
    free(rpm);
}
