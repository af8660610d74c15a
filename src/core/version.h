/* version.h — version comparison per ecosystem: dpkg (epoch:upstream-revision,
 * '~' sorts before anything), rpm (rpmvercmp, epoch, '~' and '^'), NVIDIA driver
 * versions (535.183.01: numeric fields), and generic semver-like upstream
 * versions (1.2.3, v1.2.3-rc1, 2.9.0~rc1, 23.10-1.1.9.0). */
#ifndef VG_VERSION_H
#define VG_VERSION_H
#include <stdbool.h>

enum vg_ecosystem {
    VG_ECO_GENERIC = 0, /* upstream semver-like */
    VG_ECO_DPKG,
    VG_ECO_RPM,
    VG_ECO_NVIDIA,      /* NVIDIA driver and other dotted-numeric versions */
    VG_ECO_COUNT
};

const char *vg_eco_name(enum vg_ecosystem e);          /* "generic" "dpkg" "rpm" "nvidia" */
bool vg_eco_parse(const char *s, enum vg_ecosystem *e);
/* <0, 0, >0 like strcmp.  Never crashes on any input (fuzzed). */
int vg_version_cmp(enum vg_ecosystem eco, const char *a, const char *b);
/* The upstream part of a distribution version: strips the dpkg/rpm epoch and
 * the revision/release ("1:1.7.2-0ubuntu1~22.04.1" → "1.7.2"), into buf. */
void vg_version_upstream(enum vg_ecosystem eco, const char *v, char *buf, unsigned n);

#endif
