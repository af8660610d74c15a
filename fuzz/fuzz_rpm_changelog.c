/* fuzz_rpm_changelog.c — libFuzzer target for the rpm changelog reader
 * (src/inventory/changelog_rpm.c): any input, read as one package's
 * `rpm -q --changelog` text or as the loader's whole `rpm -q --qf` output,
 * must yield only well-formed CVE ids that vg_changelog_names finds again,
 * each with an entry version that counts against the installed one — never a
 * crash or an out-of-bounds read.  The input's first line is also compared
 * as a version. */
#include "inventory/inventory.h"
#include "util/log.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void check(const struct vg_changelog *cl, const char *installed)
{
    for (size_t i = 0; i < cl->n; i++) {
        const struct vg_cl_cve *c = &cl->v[i];
        if (strncmp(c->cve, "CVE-", 4) || strlen(c->cve) < 13 || !vg_changelog_names(cl, c->cve)) abort();
        if (!c->version[0] || !vg_rpm_changelog_counts(c->version, installed)) abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    vg_log_level(-1);
    const char *text = (const char *)data;
    struct vg_changelog cl = { 0 };
    vg_rpm_changelog_parse(text, size, "8.7p1-43.el9", &cl);
    check(&cl, "8.7p1-43.el9");
    vg_changelog_free(&cl);
    vg_rpm_changelog_parse(text, size, NULL, &cl);
    check(&cl, NULL);
    vg_changelog_free(&cl);

    struct vg_component a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    strcpy(a.package, "openssh-server");
    strcpy(a.version, "1:8.7p1-38.el9_4.1");
    strcpy(b.package, "sudo");
    struct vg_component *comps[] = { &a, &b };
    vg_rpm_changelogs_split(comps, 2, text, size);
    check(&a.changelog, a.version);
    check(&b.changelog, NULL);
    vg_changelog_free(&a.changelog);
    vg_changelog_free(&b.changelog);

    char line[128];
    size_t l = 0;
    while (l < size && l < sizeof line - 1 && data[l] != '\n' && data[l]) l++;
    memcpy(line, data, l);
    line[l] = 0;
    vg_rpm_changelog_counts(line, "8.7p1-38.el9_4.1");
    vg_rpm_changelog_counts("8.7p1-38.1", line);
    return 0;
}
