/* col_os.c — collector for the OS release (/etc/os-release, falling back to
 * /usr/lib/os-release), the running kernel (/proc/sys/kernel/osrelease, then
 * /proc/version) and the host name. */
#include "inventory/inventory.h"
#include "util/rootfs.h"
#include "util/strutil.h"
#include <stdlib.h>
#include <string.h>

/* Copies the value of KEY= from os-release text (quotes removed). */
static void osr_value(const char *text, const char *key, char *buf, size_t n)
{
    size_t kl = strlen(key);
    for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        if (strncmp(l, key, kl) || l[kl] != '=') continue;
        const char *v = l + kl + 1, *e = strchr(v, '\n');
        size_t len = e ? (size_t)(e - v) : strlen(v);
        if (len && (*v == '"' || *v == '\'')) { v++; len--; }
        if (len && (v[len - 1] == '"' || v[len - 1] == '\'')) len--;
        vg_strlcpy(buf, v, len + 1 < n ? len + 1 : n);
        return;
    }
}

static int collect(struct vg_inventory *inv)
{
    char *text;
    const char *src = "/etc/os-release";
    if (vg_read_file(inv->root, src, 1 << 16, &text, NULL) < 0) {
        src = "/usr/lib/os-release";
        if (vg_read_file(inv->root, src, 1 << 16, &text, NULL) < 0) text = NULL;
    }
    if (text) {
        osr_value(text, "ID", inv->os_id, sizeof inv->os_id);
        osr_value(text, "VERSION_ID", inv->os_version_id, sizeof inv->os_version_id);
        osr_value(text, "PRETTY_NAME", inv->os_pretty, sizeof inv->os_pretty);
        free(text);
        if (inv->os_id[0]) {
            struct vg_component *c = vg_inventory_add(inv, "os", inv->os_version_id, VG_ECO_GENERIC, src);
            vg_strlcpy(c->package, inv->os_id, sizeof c->package);
            vg_strlcpy(c->detail, inv->os_pretty, sizeof c->detail);
        }
    }
    char line[512];
    if (vg_read_line(inv->root, "/proc/sys/kernel/osrelease", inv->kernel, sizeof inv->kernel) == 0 && inv->kernel[0]) {
        vg_inventory_add(inv, "linux-kernel", inv->kernel, VG_ECO_GENERIC, "/proc/sys/kernel/osrelease");
    } else if (vg_read_line(inv->root, "/proc/version", line, sizeof line) == 0 && vg_startswith(line, "Linux version ")) {
        char *v = line + 14, *sp = strchr(v, ' ');
        if (sp) *sp = 0;
        vg_strlcpy(inv->kernel, v, sizeof inv->kernel);
        vg_inventory_add(inv, "linux-kernel", inv->kernel, VG_ECO_GENERIC, "/proc/version");
    }
    struct vg_component *k = vg_inventory_find(inv, "linux-kernel");
    if (k) {
        /* "5.15.0-88-generic" → "5.15.0-88": the flavour is not part of the version. */
        vg_strlcpy(k->upstream, k->version, sizeof k->upstream);
        char *dash = strrchr(k->upstream, '-');
        if (dash && dash != strchr(k->upstream, '-') && dash[1] >= 'a' && dash[1] <= 'z') *dash = 0;
    }
    if (vg_read_line(inv->root, "/proc/sys/kernel/hostname", inv->hostname, sizeof inv->hostname) < 0 || !inv->hostname[0])
        if (vg_read_line(inv->root, "/etc/hostname", inv->hostname, sizeof inv->hostname) < 0) inv->hostname[0] = 0;
    return 0;
}

const struct vg_collector vg_col_os = { "os", collect, NULL, 0 };
