/* amdparts.c — the AMD Instinct GPUs of a node, read from sysfs
 * (/sys/bus/pci/devices/BDF/{vendor,device,vbios_version}), and the part key
 * AMD's advisories and the node's GPUs are compared by.  The PCI device ids
 * are the ones the ROCm Validation Suite maps to its platform
 * configurations (ROCm/ROCmValidationSuite src/gpu_util.cpp, gpu_dev_map);
 * a device of AMD's (vendor 0x1002) that is not among them is counted as an
 * unknown part, never guessed. */
#include "inventory/inventory.h"
#include "util/rootfs.h"
#include "util/strutil.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct { unsigned id; const char *part; } parts[] = {
    { 0x74a1, "MI300X" }, { 0x74a9, "MI300X" },   /* MI300X, MI300X-HF */
    { 0x74a2, "MI308X" }, { 0x74a8, "MI308X" },   /* MI308X, MI308X-HF */
    { 0x74a5, "MI325X" }, { 0x75a0, "MI350X" }, { 0x75a3, "MI355X" }, { 0x75a8, "MI350P" }, { 0x75c1, "MI450X" },
};

const char *vg_amd_part_for_device(unsigned device)
{
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        if (parts[i].id == device) return parts[i].part;
    return NULL;
}

void vg_amd_part_key(const char *name, char *key, size_t n)
{
    key[0] = 0;
    if (!n) return;
    /* "AMD Instinct™ MI300X", "AMD Instinctâ„¢  MI300X" (a record's double
     * encoding), "MI300X-HF", "mi250x": "MI", digits, then letters */
    for (const char *p = name ? name : ""; *p; p++) {
        if (toupper((unsigned char)p[0]) != 'M' || toupper((unsigned char)p[1]) != 'I' ||
            !isdigit((unsigned char)p[2]) || (p > name && isalnum((unsigned char)p[-1])))
            continue;
        size_t k = 0;
        key[k++] = 'm';
        if (k < n - 1) key[k++] = 'i';
        const char *q = p + 2;
        while (isdigit((unsigned char)*q) && k < n - 1) key[k++] = *q++;
        while (isalpha((unsigned char)*q) && k < n - 1) key[k++] = (char)tolower((unsigned char)*q++);
        key[k] = 0;
        return;
    }
}

/* A sysfs attribute holding one hexadecimal id ("0x74a1"); -1 when unreadable. */
static long hex_attr(const char *root, const char *path)
{
    char line[32], *end;
    if (vg_read_line(root, path, line, sizeof line) < 0) return -1;
    long v = strtol(line, &end, 16);
    return end != line && (*end == 0 || *end == '\n' || *end == ' ') ? v : -1;
}

size_t vg_amd_gpus(const char *root, struct vg_amd_gpu *gpus, size_t max)
{
    char **names;
    int n = vg_list_dir(root, "/sys/bus/pci/devices", &names);
    size_t k = 0;
    for (int i = 0; i < n && k < max; i++) {
        char path[320];
        snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/vendor", names[i]);
        if (hex_attr(root, path) != 0x1002) continue;
        snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/device", names[i]);
        long dev = hex_attr(root, path);
        const char *part = dev >= 0 ? vg_amd_part_for_device((unsigned)dev) : NULL;
        if (!part) continue;   /* an AMD device that is no Instinct GPU we know (a CPU's, a NIC's) */
        struct vg_amd_gpu *g = &gpus[k++];
        memset(g, 0, sizeof *g);
        vg_strlcpy(g->bdf, names[i], sizeof g->bdf);
        g->device = (unsigned)dev;
        vg_strlcpy(g->part, part, sizeof g->part);
        snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/vbios_version", names[i]);
        if (vg_read_line(root, path, g->vbios, sizeof g->vbios) < 0) g->vbios[0] = 0;
        g->vbios[strcspn(g->vbios, "\n")] = 0;
    }
    if (n >= 0) vg_free_list(names, n);
    return k;
}
