/* audit.c — runs the match of a node's inventory against the advisory
 * database and sorts the result into CVE findings, outdated components and
 * fixes the distribution made (see audit.h).  A package's changelog is read
 * only when its match has a finding decided upstream that the changelog
 * could refute (a first, counting match finds those packages; their
 * changelogs are read together, then the match runs for real). */
#include "advisory/audit.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <stdlib.h>
#include <string.h>

static void on_finding(const struct vg_finding *f, void *ctx)
{
    struct vg_audit *a = ctx;
    struct vg_finding **v = &a->outdated;
    size_t *n = &a->noutdated, *cap = &a->cap_o;
    if (f->kind == VG_FIND_CVE) v = &a->findings, n = &a->nfindings, cap = &a->cap_f;
    else if (f->kind == VG_FIND_DISTRO_FIXED) v = &a->fixed, n = &a->nfixed, cap = &a->cap_x;
    else if (f->kind == VG_FIND_UNDECIDED) v = &a->undecided, n = &a->nundecided, cap = &a->cap_u;
    else if (f->kind == VG_FIND_UNKNOWN) v = &a->unknown, n = &a->nunknown, cap = &a->cap_k;
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 16;
        *v = vg_xrealloc(*v, *cap * sizeof **v);
    }
    (*v)[(*n)++] = *f;
}

static int finding_cmp(const void *x, const void *y)
{
    const struct vg_finding *a = x, *b = y;
    if (a->severity != b->severity) return a->severity > b->severity ? -1 : 1;
    int c = strcmp(a->comp->name, b->comp->name);
    if (c) return c;
    if (a->comp != b->comp) return a->comp < b->comp ? -1 : 1;
    return strcmp(a->adv ? a->adv->id : "", b->adv ? b->adv->id : "");
}

static void on_probe(const struct vg_finding *f, void *ctx)
{
    if (f->backport_possible) *(bool *)ctx = true;
}

void vg_audit_run(struct vg_audit *a, const struct vg_advdb *db)
{
    struct vg_component **want = vg_xmalloc((a->inv.n ? a->inv.n : 1) * sizeof *want);
    size_t nwant = 0;
    for (size_t i = 0; i < a->inv.n; i++) {
        struct vg_component *c = &a->inv.items[i];
        bool upstream = false;
        if (c->package[0] && !c->changelog.read && (c->eco == VG_ECO_DPKG || c->eco == VG_ECO_RPM))
            vg_advdb_match(db, c, on_probe, &upstream);
        if (upstream) want[nwant++] = c;
    }
    if (nwant) vg_inventory_changelogs(&a->inv, want, nwant);
    free(want);
    for (size_t i = 0; i < a->inv.n; i++) vg_advdb_match(db, &a->inv.items[i], on_finding, a);
    if (a->nfindings > 1) qsort(a->findings, a->nfindings, sizeof *a->findings, finding_cmp);
    if (a->noutdated > 1) qsort(a->outdated, a->noutdated, sizeof *a->outdated, finding_cmp);
    if (a->nfixed > 1) qsort(a->fixed, a->nfixed, sizeof *a->fixed, finding_cmp);
    if (a->nundecided > 1) qsort(a->undecided, a->nundecided, sizeof *a->undecided, finding_cmp);
    if (a->nunknown > 1) qsort(a->unknown, a->nunknown, sizeof *a->unknown, finding_cmp);
    if (!a->generated_ms) a->generated_ms = vg_now_ms();
}

void vg_audit_free(struct vg_audit *a)
{
    free(a->findings);
    free(a->outdated);
    free(a->fixed);
    free(a->undecided);
    free(a->unknown);
    vg_inventory_free(&a->inv);
}

size_t vg_audit_count_at_least(const struct vg_audit *a, enum vg_severity sev)
{
    size_t n = 0;
    for (size_t i = 0; i < a->nfindings; i++) n += a->findings[i].severity >= sev;
    return n;
}
