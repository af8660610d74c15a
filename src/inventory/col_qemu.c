/* col_qemu.c — collector for QEMU/KVM, the hypervisor a provider runs tenant
 * VMs with: the package that carries the system emulator (Debian and Ubuntu
 * qemu-system-x86 / qemu-system-arm / qemu-system-misc of source package
 * qemu; RHEL, Rocky and AlmaLinux qemu-kvm / qemu-kvm-core of source
 * qemu-kvm).  Matched like any distribution package: the distribution's own
 * records for qemu when the database holds them, else the upstream number. */
#include "inventory/inventory.h"

static const struct vg_pkg_rule rules[] = {
    { "qemu", { "qemu-system-x86", "qemu-system-arm", "qemu-system-misc", "qemu-kvm", "qemu-kvm-core",
                "qemu-system-x86-core", NULL } },
};

const struct vg_collector vg_col_qemu = { "qemu", NULL, rules, sizeof rules / sizeof rules[0] };
