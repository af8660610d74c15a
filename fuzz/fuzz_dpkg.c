/* fuzz_dpkg.c — libFuzzer target for the dpkg status parser: any input must
 * either parse (every package then has a name and a version, and lookups
 * find it) or be rejected with an error — never crash or read out of bounds.
 * The same input is read as a Debian changelog: every CVE it yields is a
 * well-formed id found again by vg_changelog_names. */
#include "inventory/inventory.h"
#include "util/log.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    vg_log_level(-1);
    struct vg_inventory inv;
    vg_inventory_init(&inv, "/");
    char *buf = malloc(size + 1);
    if (!buf) return 0;
    memcpy(buf, data, size);
    buf[size] = 0;
    if (vg_dpkg_parse(&inv, buf, size, "status") == 0) {
        vg_inventory_sort_pkgs(&inv);
        for (size_t i = 0; i < inv.npkgs; i++) {
            if (!inv.pkgs[i].name || !inv.pkgs[i].version || !*inv.pkgs[i].version) abort();
            if (!vg_inventory_pkg(&inv, inv.pkgs[i].name)) abort();
        }
    }
    struct vg_changelog cl = { 0 };
    vg_deb_changelog_parse((const char *)data, size, "1.0-1", &cl);
    for (size_t i = 0; i < cl.n; i++)
        if (strncmp(cl.v[i].cve, "CVE-", 4) || strlen(cl.v[i].cve) < 13 || !vg_changelog_names(&cl, cl.v[i].cve)) abort();
    vg_changelog_free(&cl);
    free(buf);
    vg_inventory_free(&inv);
    return 0;
}
