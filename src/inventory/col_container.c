/* col_container.c — collector for the container stack, from the package
 * database: NVIDIA Container Toolkit, libnvidia-container, runc, containerd,
 * Docker, kubelet. */
#include "inventory/inventory.h"

static const struct vg_pkg_rule rules[] = {
    { "nvidia-container-toolkit", { "nvidia-container-toolkit", "nvidia-container-toolkit-base", NULL } },
    { "libnvidia-container", { "libnvidia-container1", "libnvidia-container-tools", "libnvidia-container", NULL } },
    { "runc", { "runc", NULL } },
    { "containerd", { "containerd.io", "containerd", NULL } },
    { "docker", { "docker-ce", "docker.io", "moby-engine", "docker", NULL } },
    { "kubelet", { "kubelet", NULL } },
};

const struct vg_collector vg_col_container = { "container", NULL, rules, sizeof rules / sizeof rules[0] };
