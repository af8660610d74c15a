/* fuzz_rpm_qa.c — libFuzzer target for the rpm package list reader
 * (src/inventory/pkgdb_rpm.c, vg_rpm_parse): any input, read as the output of
 * `rpm -qa --qf 'NAME\tEPOCH:VERSION-RELEASE\tARCH\tSOURCERPM\n'`, must yield
 * packages sorted by name, each with a name, a version and a source package
 * that is "" or a prefix of its source rpm field (never a crash or an
 * out-of-bounds read). */
#include "inventory/inventory.h"
#include "util/log.h"
#include "util/strutil.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    vg_log_level(-1);
    struct vg_inventory inv;
    vg_inventory_init(&inv, "/");
    char *buf = vg_xmalloc(size + 1);
    memcpy(buf, data, size);
    buf[size] = 0;
    inv.bufs = vg_xmalloc(sizeof *inv.bufs);
    inv.bufs[inv.nbufs++] = buf;
    vg_rpm_parse(&inv, buf);
    for (size_t i = 0; i < inv.npkgs; i++) {
        const struct vg_pkg *p = &inv.pkgs[i];
        if (!p->name[0] || !p->version[0] || !p->src || !strcmp(p->name, "gpg-pubkey")) abort();
        if (p->src[0] && (strchr(p->src, '\t') || strchr(p->src, '\n') || !strcmp(p->src, p->name))) abort();
        if (i && strcmp(inv.pkgs[i - 1].name, p->name) > 0) abort();
        if (vg_inventory_pkg(&inv, p->name) == NULL) abort();
    }
    vg_inventory_free(&inv);
    return 0;
}
