/* col_base.c — collector for the base system packages with high-impact CVEs:
 * OpenSSH, sudo, glibc, polkit (Debian and RPM package names). */
#include "inventory/inventory.h"

static const struct vg_pkg_rule rules[] = {
    { "openssh", { "openssh-server", "openssh-client", "openssh-clients", "openssh", NULL } },
    { "sudo", { "sudo", "sudo-ldap", NULL } },
    { "glibc", { "libc6", "glibc", NULL } },
    { "polkit", { "polkitd", "policykit-1", "polkit", "libpolkit-gobject-1-0", NULL } },
};

const struct vg_collector vg_col_base = { "base", NULL, rules, sizeof rules / sizeof rules[0] };
