/* amd_ras.c — the amdgpu driver's RAS facts as text and as counts: the
 * blocks (named as amdgpu_ras.c's ras_block_string, numbered as
 * amdsmi_gpu_block_t), the sysfs "<block>_err_count" and
 * "gpu_vram_bad_pages" formats (Documentation: drivers/gpu/drm/amd/amdgpu/
 * amdgpu_ras.c, "AMDGPU RAS sysfs Error Count Interface" and "gpu_vram_bad_pages
 * Interface"), and one GPU's counts put into the neutral state.  Bad text is
 * refused or skipped, never guessed at. */
#include "signal/amd.h"
#include "util/strutil.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const struct vg_amd_block vg_amd_blocks[VG_AMD_BLOCKS] = {
    { "umc", 0x1 },       { "sdma", 0x2 },      { "gfx", 0x4 },       { "mmhub", 0x8 },     { "athub", 0x10 },
    { "pcie_bif", 0x20 }, { "hdp", 0x40 },      { "xgmi_wafl", 0x80 }, { "df", 0x100 },     { "smn", 0x200 },
    { "sem", 0x400 },     { "mp0", 0x800 },     { "mp1", 0x1000 },    { "fuse", 0x2000 },   { "mca", 0x4000 },
    { "vcn", 0x8000 },    { "jpeg", 0x10000 },  { "ih", 0x20000 },    { "mpio", 0x40000 },
};

const struct vg_amd_block *vg_amd_block_named(const char *name, size_t n)
{
    for (size_t i = 0; i < VG_AMD_BLOCKS; i++)
        if (strlen(vg_amd_blocks[i].name) == n && strncasecmp(vg_amd_blocks[i].name, name, n) == 0)
            return &vg_amd_blocks[i];
    return NULL;
}

void vg_amd_ras_init(struct vg_amd_ras *r)
{
    for (size_t i = 0; i < VG_AMD_BLOCKS; i++) r->ue[i] = r->ce[i] = -1;
    r->bad_reserved = r->bad_pending = r->bad_failed = -1;
    r->bad_threshold = -1;
}

void vg_amd_ras_to_state(const struct vg_amd_ras *r, struct vg_gpu_state *st)
{
    long long ue = -1, ce = -1;
    char where[48] = "";
    size_t w = 0;
    for (size_t i = 0; i < VG_AMD_BLOCKS; i++) {
        if (r->ue[i] >= 0) ue = (ue < 0 ? 0 : ue) + r->ue[i];
        if (r->ce[i] >= 0) ce = (ce < 0 ? 0 : ce) + r->ce[i];
        if (r->ue[i] > 0 && w < sizeof where)
            w += (size_t)snprintf(where + w, sizeof where - w, "%s%s:%lld", w ? "," : "", vg_amd_blocks[i].name,
                                  r->ue[i]);
    }
    if (ue >= 0) st->ecc_ue = ue;
    if (ce >= 0) st->ecc_ce = ce;
    if (where[0]) vg_gpu_extra_set(st, "ue_blocks", "%s", where);
    if (r->bad_reserved >= 0) {
        long long all = r->bad_reserved + (r->bad_pending > 0 ? r->bad_pending : 0) + (r->bad_failed > 0 ? r->bad_failed : 0);
        st->retired_ue = all;
        /* AMD's rule (amdgpu_ras_eeprom.c): retired pages at the threshold, or a
         * page the driver could not reserve, mean the GPU must be replaced */
        st->remap_failure = (r->bad_failed > 0 || (r->bad_threshold > 0 && all >= r->bad_threshold)) ? 1 : 0;
        st->remap_ue = all;
        vg_gpu_extra_set(st, "bad_pages", "%lld reserved, %lld pending, %lld unreservable", r->bad_reserved,
                         r->bad_pending > 0 ? r->bad_pending : 0, r->bad_failed > 0 ? r->bad_failed : 0);
        if (r->bad_threshold > 0) vg_gpu_extra_set(st, "bad_page_threshold", "%lld", r->bad_threshold);
    }
}

/* A decimal count at p (up to the end of the line); false when it is not one. */
static bool count_at(const char *p, const char *end, long long *out)
{
    while (p < end && (*p == ' ' || *p == '\t')) p++;
    if (p == end || !isdigit((unsigned char)*p)) return false;
    long long v = 0;
    while (p < end && isdigit((unsigned char)*p)) {
        if (v > (1LL << 50)) return false;   /* no GPU counts that far: the file is garbage */
        v = v * 10 + (*p++ - '0');
    }
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\r')) p++;
    if (p != end) return false;
    *out = v;
    return true;
}

int vg_amd_parse_err_count(const char *text, size_t len, long long *ue, long long *ce)
{
    bool have_ue = false, have_ce = false;
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        size_t n = (size_t)(le - p);
        if (n >= 28 && memcmp(p, "Query currently inaccessible", 28) == 0) return 1;
        if (n == 0) {
            /* blank line */
        } else if (n > 3 && memcmp(p, "ue:", 3) == 0 && !have_ue) {
            if (!count_at(p + 3, le, ue)) return -1;
            have_ue = true;
        } else if (n > 3 && memcmp(p, "ce:", 3) == 0 && !have_ce) {
            if (!count_at(p + 3, le, ce)) return -1;
            have_ce = true;
        } else if (n > 3 && memcmp(p, "de:", 3) == 0) {
            /* deferred errors (newer drivers): not counted as uncorrectable */
        } else {
            return -1;
        }
        p = nl ? nl + 1 : end;
    }
    return have_ue && have_ce ? 0 : -1;
}

/* "0x00000001" at p: hex digits after 0x, at most 16. */
static const char *hex_field(const char *p, const char *end)
{
    while (p < end && *p == ' ') p++;
    if (end - p < 3 || p[0] != '0' || (p[1] != 'x' && p[1] != 'X')) return NULL;
    p += 2;
    const char *start = p;
    while (p < end && isxdigit((unsigned char)*p)) p++;
    if (p == start || p - start > 16) return NULL;
    while (p < end && *p == ' ') p++;
    return p;
}

int vg_amd_parse_bad_pages(const char *text, size_t len, long long *reserved, long long *pending,
                           long long *failed)
{
    *reserved = *pending = *failed = 0;
    int bad = 0;
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        while (le > p && (le[-1] == '\r' || le[-1] == ' ')) le--;
        if (le > p) {
            /* pfn : page size : flag */
            const char *q = hex_field(p, le);
            if (q && q < le && *q == ':') q = hex_field(q + 1, le);
            else q = NULL;
            if (q && q < le && *q == ':') {
                q++;
                while (q < le && *q == ' ') q++;
                if (le - q == 1 && *q == 'R') ++*reserved;
                else if (le - q == 1 && *q == 'P') ++*pending;
                else if (le - q == 1 && *q == 'F') ++*failed;
                else bad++;
            } else
                bad++;
        }
        p = nl ? nl + 1 : end;
    }
    return bad;
}
