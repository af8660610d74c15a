/* kmsg.c — the kernel-log parser (see kmsg.h): lines, the fast path, and
 * the recognizers (kmsg_int.h).  The hot path never looks at ordinary lines:
 * each feed searches the buffer for the recognizers' markers (the first two
 * bytes of each, sixteen bytes at a time: a nibble table lookup on x86 with
 * SSSE3, compares elsewhere) and counts the newlines before the next one; only marker lines (and /dev/kmsg continuation lines) are framed
 * and offered to the recognizers whose marker they hold. */
#include "signal/kmsg_int.h"
#include "util/rootfs.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <tmmintrin.h>
#define VG_KMSG_NIBBLES 1
#else
#define VG_KMSG_NIBBLES 0
#endif

/* The fast path's byte pairs and the markers, from the recognizers' tables. */
static void index_markers(struct vg_kmsg *k)
{
    for (size_t r = 0; vg_kmsg_recognizers[r] && r < VG_KMSG_REC_MAX; r++)
        for (const char *const *mk = vg_kmsg_recognizers[r]->markers; *mk; mk++) {
            size_t len = strlen(*mk);
            if (len < 2 || k->nmarkers == VG_KMSG_MARKERS) continue;   /* the recognizers' test refuses these */
            k->marker[k->nmarkers].s = *mk;
            k->marker[k->nmarkers++].len = len;
            int i = 0;
            while (i < k->npairs && (k->pair0[i] != (unsigned char)(*mk)[0] || k->pair1[i] != (unsigned char)(*mk)[1]))
                i++;
            if (i == k->npairs && k->npairs < VG_KMSG_PAIRS) {
                unsigned char c0 = (unsigned char)(*mk)[0], c1 = (unsigned char)(*mk)[1], bit = (unsigned char)(1u << (i % 8));
                k->pair0[i] = c0;
                k->pair1[i] = c1;
                int g = i / 8 * 4;
                k->nib[g][c0 & 15] |= bit, k->nib[g + 1][c0 >> 4] |= bit;
                k->nib[g + 2][c1 & 15] |= bit, k->nib[g + 3][c1 >> 4] |= bit;
                k->npairs++;
            }
        }
}

void vg_kmsg_init(struct vg_kmsg *k, const struct vg_kmsg_opts *o, vg_kmsg_emit_fn emit, void *arg)
{
    memset(k, 0, sizeof *k);
    if (o) k->o = *o;
    if (k->o.year <= 0) {
        time_t t = (time_t)(vg_now_ms() / 1000);
        struct tm tm;
        gmtime_r(&t, &tm);
        k->o.year = tm.tm_year + 1900;
    }
    k->emit = emit;
    k->arg = arg;
    k->pend_owner = -1;
    index_markers(k);
#if VG_KMSG_NIBBLES
    k->nibbles = __builtin_cpu_supports("ssse3");
#endif
}

/* ---- event extraction ------------------------------------------------------ */

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    c = (char)tolower((unsigned char)c);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

bool vg_pci_normalize(const char *s, size_t n, char out[16])
{
    if (n >= 4 && strncasecmp(s, "PCI:", 4) == 0) s += 4, n -= 4;
    unsigned part[4] = { 0, 0, 0, 0 };
    int np = 0, nd = 0;
    char sep[4] = { 0, 0, 0, 0 };
    for (size_t i = 0; i <= n; i++) {
        int h = i < n ? hexval(s[i]) : -1;
        if (h >= 0) {
            if (++nd > 4) return false;
            part[np] = part[np] * 16 + (unsigned)h;
            continue;
        }
        if (nd == 0) return false;
        sep[np] = i < n ? s[i] : '\0';
        np++;
        nd = 0;
        if (i == n || (s[i] != ':' && s[i] != '.') || np == 4) break;
    }
    unsigned dom = 0, bus, dev, fn = 0;
    if (np == 4 && sep[0] == ':' && sep[1] == ':' && sep[2] == '.') dom = part[0], bus = part[1], dev = part[2], fn = part[3];
    else if (np == 3 && sep[0] == ':' && sep[1] == ':') dom = part[0], bus = part[1], dev = part[2];
    else if (np == 3 && sep[0] == ':' && sep[1] == '.') bus = part[0], dev = part[1], fn = part[2];
    else return false;
    if (bus > 0xff || dev > 0x1f || fn > 7) return false;
    snprintf(out, 16, "%04x:%02x:%02x.%x", dom & 0xffff, bus, dev, fn);
    return true;
}

/* The PCI address starting at p (until ')', ':' followed by space, ' ' or end). */
bool vg_kmsg_pci_at(const char *p, char out[16])
{
    size_t n = 0;
    if (strncasecmp(p, "PCI:", 4) == 0) n = 4;
    while (p[n] && (isxdigit((unsigned char)p[n]) || p[n] == ':' || p[n] == '.')) n++;
    while (n && (p[n - 1] == ':' || p[n - 1] == '.')) n--;
    return vg_pci_normalize(p, n, out);
}

int vg_kmsg_gpu_index(const char *s)
{
    for (const char *p = strstr(s, "GPU"); p; p = strstr(p + 3, "GPU")) {
        if (isdigit((unsigned char)p[3]) && (p == s || !isalnum((unsigned char)p[-1]))) {
            int v = 0, i = 3;
            while (isdigit((unsigned char)p[i]) && v < 10000) v = v * 10 + (p[i++] - '0');
            if (!isalnum((unsigned char)p[i])) return v;
        }
    }
    return -1;
}

static void map_gpu(struct vg_kmsg *k, struct vg_event *e)
{
    if (!e->pci[0]) return;
    for (int i = 0; i < k->ngpumap && i < VG_KMSG_GPUMAP; i++)
        if (strcmp(k->gpumap[i].pci, e->pci) == 0) {
            if (e->gpu >= 0) k->gpumap[i].gpu = e->gpu;
            else e->gpu = k->gpumap[i].gpu;
            return;
        }
    if (e->gpu < 0) return;
    int slot = k->ngpumap++ % VG_KMSG_GPUMAP;
    vg_strlcpy(k->gpumap[slot].pci, e->pci, sizeof k->gpumap[slot].pci);
    k->gpumap[slot].gpu = e->gpu;
}

static void flush(struct vg_kmsg *k)
{
    if (!k->have_pend) return;
    k->have_pend = false;
    k->pend_owner = -1;
    map_gpu(k, &k->pend);
    k->last = k->pend;   /* as completed by its continuation lines */
    k->events++;
    if (k->emit) k->emit(&k->pend, k->arg);
}

bool vg_kmsg_recent(const struct vg_kmsg *k, const char *kind, int code, const char *pci)
{
    return k->last_line && k->lines - k->last_line <= 8 && strcmp(k->last.kind, kind) == 0 &&
           (code < 0 || k->last.code == code) && (!pci[0] || !k->last.pci[0] || strcmp(k->last.pci, pci) == 0);
}

struct vg_event *vg_kmsg_start(struct vg_kmsg *k, const struct vg_kmsg_msg *m, const char *kind, int code,
                               const char *pci, int gpu)
{
    flush(k);
    struct vg_event *e = &k->pend;
    vg_event_init(e);
    if (k->o.node) vg_strlcpy(e->node, k->o.node, sizeof e->node);
    vg_strlcpy(e->source, "kmsg", sizeof e->source);
    vg_strlcpy(e->kind, kind, sizeof e->kind);
    e->code = code;
    vg_strlcpy(e->pci, pci, sizeof e->pci);
    e->gpu = gpu;
    if (m->abs_ms > 0) e->time_ms = m->abs_ms;
    else if (m->rel_us >= 0 && k->o.boot_ms > 0) e->time_ms = k->o.boot_ms + m->rel_us / 1000;
    e->seen_ms = vg_now_ms();
    vg_strlcpy(e->raw, m->line, sizeof e->raw);
    k->have_pend = true;
    k->pend_owner = k->rec_cur;
    k->last = *e;
    k->last_line = k->lines;
    return e;
}

/* Whether the message holds one of recognizer r's markers. */
static bool holds_marker(const struct vg_kmsg_recognizer *r, const char *msg)
{
    for (const char *const *mk = r->markers; *mk; mk++)
        if (strstr(msg, *mk)) return true;
    return false;
}

/* A framed line: the rest of the event held, or offered to each recognizer
 * whose marker it holds, in the table's order, until one takes it. */
static void dispatch(struct vg_kmsg *k, const struct vg_kmsg_msg *m)
{
    const struct vg_kmsg_recognizer *r;
    if (k->have_pend && k->pend_owner >= 0) {
        r = vg_kmsg_recognizers[k->pend_owner];
        k->rec_cur = k->pend_owner;
        if (r->continues && holds_marker(r, m->msg) && r->continues(k, m, &k->pend, k->rstate[k->pend_owner]))
            return;
    }
    flush(k);
    for (int i = 0; (r = vg_kmsg_recognizers[i]) && i < VG_KMSG_REC_MAX; i++) {
        if (!holds_marker(r, m->msg)) continue;
        k->rec_cur = i;
        int rc = r->line(k, m, k->rstate[i]);
        if (rc < 0) k->malformed++;
        if (rc) return;
    }
}

/* A full look at one line (counted by the caller). */
static void parse_line(struct vg_kmsg *k, const char *s, size_t n, bool overlong)
{
    if (n && s[n - 1] == '\r') n--;
    /* /dev/kmsg continuation: " SUBSYSTEM=pci", " DEVICE=+pci:0000:3b:00.0" */
    if (k->need_next && n && s[0] == ' ') {
        if (k->have_pend && !k->pend.pci[0] && n > 13 && memcmp(s, " DEVICE=+pci:", 13) == 0)
            vg_pci_normalize(s + 13, n - 13, k->pend.pci);
        return;
    }
    k->need_next = false;
    if (overlong || memchr(s, '\0', n)) {
        flush(k);
        k->malformed++;
        return;
    }
    char line[VG_KMSG_LINE_MAX + 1];
    memcpy(line, s, n);
    line[n] = '\0';
    struct vg_kmsg_msg m;
    if (vg_kmsg_frame(k, line, &m)) {
        flush(k);
        k->malformed++;
        return;
    }
    k->need_next = m.kmsg;
    dispatch(k, &m);
}

void vg_kmsg_line(struct vg_kmsg *k, const char *line, size_t n)
{
    k->lines++;
    parse_line(k, line, n > VG_KMSG_LINE_MAX ? VG_KMSG_LINE_MAX : n, n > VG_KMSG_LINE_MAX);
}

/* Is there a marker at q (whose first two bytes matched)? */
static bool anchor_at(const struct vg_kmsg *k, const char *q, const char *end)
{
    for (int i = 0; i < k->nmarkers; i++)
        if ((size_t)(end - q) >= k->marker[i].len && memcmp(q, k->marker[i].s, k->marker[i].len) == 0) return true;
    return false;
}

typedef unsigned char vg_v16 __attribute__((vector_size(16)));

static uint64_t lanes_sum(vg_v16 v)
{
    unsigned char b[16];
    memcpy(b, &v, 16);
    uint64_t n = 0;
    for (int i = 0; i < 16; i++) n += b[i];
    return n;
}

#if VG_KMSG_NIBBLES
/* scan_anchor on x86 with SSSE3: every pair in one lookup per nibble (the
 * way Hyperscan's Teddy finds many literals): for each of the block's bytes
 * and the byte after it, four table lookups (PSHUFB) give the pairs whose
 * first and second bytes have those nibbles, eight pairs a group
 * (VG_KMSG_PAIRS / 8 groups); one pair per bit, so a lane is set only where a
 * pair starts.  A block costs four lookups per group of eight pairs. */
__attribute__((target("ssse3"))) static const char *scan_nibbles(const struct vg_kmsg *k, const char *p,
                                                                 const char *end, uint64_t *nls)
{
    _Static_assert(VG_KMSG_PAIRS % 8 == 0, "the nibble tables hold pairs in groups of eight");
    const __m128i low = _mm_set1_epi8(0x0f), newline = _mm_set1_epi8('\n'), zero = _mm_setzero_si128();
    __m128i t[VG_KMSG_PAIRS / 2];
    for (int i = 0; i < VG_KMSG_PAIRS / 2; i++) t[i] = _mm_loadu_si128((const __m128i *)k->nib[i]);
    uint64_t n = 0;
    __m128i nl = zero;
    int blocks = 0;
    while (end - p >= 17) {
        __m128i a = _mm_loadu_si128((const __m128i *)p), b = _mm_loadu_si128((const __m128i *)(p + 1));
        __m128i al = _mm_and_si128(a, low), ah = _mm_and_si128(_mm_srli_epi16(a, 4), low);
        __m128i bl = _mm_and_si128(b, low), bh = _mm_and_si128(_mm_srli_epi16(b, 4), low);
        __m128i m = zero;
        for (int g = 0; g < VG_KMSG_PAIRS / 2; g += 4)   /* a constant count: unrolled */
            m = _mm_or_si128(m, _mm_and_si128(_mm_and_si128(_mm_shuffle_epi8(t[g], al), _mm_shuffle_epi8(t[g + 1], ah)),
                                              _mm_and_si128(_mm_shuffle_epi8(t[g + 2], bl),
                                                            _mm_shuffle_epi8(t[g + 3], bh))));
        int hit = ~_mm_movemask_epi8(_mm_cmpeq_epi8(m, zero)) & 0xffff;
        for (; hit; hit &= hit - 1) {
            int i = __builtin_ctz((unsigned)hit);
            if (anchor_at(k, p + i, end)) {
                for (int j = 0; j < i; j++) n += p[j] == '\n';
                __m128i s = _mm_sad_epu8(nl, zero);
                *nls = n + (uint64_t)_mm_cvtsi128_si32(s) + (uint64_t)_mm_extract_epi16(s, 4);
                return p + i;
            }
        }
        nl = _mm_sub_epi8(nl, _mm_cmpeq_epi8(a, newline));   /* a newline's lane is 0xff: -(-1) */
        if (++blocks == 255) {
            __m128i s = _mm_sad_epu8(nl, zero);
            n += (uint64_t)_mm_cvtsi128_si32(s) + (uint64_t)_mm_extract_epi16(s, 4);
            nl = zero;
            blocks = 0;
        }
        p += 16;
    }
    __m128i s = _mm_sad_epu8(nl, zero);
    n += (uint64_t)_mm_cvtsi128_si32(s) + (uint64_t)_mm_extract_epi16(s, 4);
    for (; p < end; p++) {
        if (anchor_at(k, p, end)) break;
        n += *p == '\n';
    }
    *nls = n;
    return p;
}
#endif

/* The first marker in [p, end) (or end), and the newlines before it: one
 * pass, sixteen bytes at a time, looking for the markers' first two bytes
 * (at most VG_KMSG_PAIRS distinct pairs; GCC vector extensions: SSE2 on
 * x86-64, NEON on aarch64).  x86 with SSSE3 takes scan_nibbles. */
static const char *scan_anchor(const struct vg_kmsg *k, const char *p, const char *end, uint64_t *nls)
{
#if VG_KMSG_NIBBLES
    if (k->nibbles) return scan_nibbles(k, p, end, nls);
#endif
    /* Every pair compared in every block (the unused ones repeat the first);
     * a constant count the compiler unrolls.  More pairs cost every block
     * more compares (measure: make bench). */
    vg_v16 c0[VG_KMSG_PAIRS], c1[VG_KMSG_PAIRS];
    for (int i = 0; i < VG_KMSG_PAIRS; i++) {
        int j = i < k->npairs ? i : 0;
        c0[i] = (vg_v16){ 0 } + k->pair0[j];
        c1[i] = (vg_v16){ 0 } + k->pair1[j];
    }
    /* Newlines are counted per byte lane (a lane's count stays under 256),
     * the lanes summed now and then. */
    uint64_t n = 0;
    vg_v16 nl = { 0 };
    int blocks = 0;
    while (end - p >= 17) {
        vg_v16 a, b;
        memcpy(&a, p, 16);
        memcpy(&b, p + 1, 16);
        vg_v16 m = { 0 };
        for (int i = 0; i < VG_KMSG_PAIRS; i++) m |= (vg_v16)((a == c0[i]) & (b == c1[i]));
        uint64_t m2[2];
        memcpy(m2, &m, 16);
        if (m2[0] | m2[1]) {
            for (int i = 0; i < 16; i++) {
                if (((const unsigned char *)&m)[i] && anchor_at(k, p + i, end)) {
                    for (int j = 0; j < i; j++) n += p[j] == '\n';
                    *nls = n + lanes_sum(nl);
                    return p + i;
                }
            }
        }
        nl -= (vg_v16)(a == '\n');   /* a newline's lane is 0xff: -(-1) */
        if (++blocks == 255) {
            n += lanes_sum(nl);
            nl = (vg_v16){ 0 };
            blocks = 0;
        }
        p += 16;
    }
    n += lanes_sum(nl);
    for (; p < end; p++) {
        if (anchor_at(k, p, end)) break;
        n += *p == '\n';
    }
    *nls = n;
    return p;
}

void vg_kmsg_feed(struct vg_kmsg *k, const char *buf, size_t n)
{
    const char *p = buf, *end = buf + n;
    /* finish a partial line kept from the last feed */
    if (k->carry_len || k->carry_over) {
        const char *nl = memchr(p, '\n', n);
        const char *stop = nl ? nl : end;
        size_t add = (size_t)(stop - p);
        if (!k->carry_over && k->carry_len + add <= VG_KMSG_LINE_MAX) {
            memcpy(k->carry + k->carry_len, p, add);
            k->carry_len += add;
        } else {
            k->carry_over = true;
        }
        if (!nl) return;
        k->lines++;
        parse_line(k, k->carry, k->carry_len, k->carry_over);
        k->carry_len = 0;
        k->carry_over = false;
        p = nl + 1;
    }
    while (p < end) {
        if (!k->need_next) {
            /* jump to the line of the nearest anchor, counting the lines skipped */
            uint64_t skipped;
            const char *a = scan_anchor(k, p, end, &skipped);
            if (skipped) {
                const char *ls = memrchr(p, '\n', (size_t)(a - p));
                flush(k);
                k->lines += skipped;
                p = ls + 1;
            }
            if (a == end) break; /* p is now the start of the (partial) last line */
        }
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) break;
        k->lines++;
        size_t len = (size_t)(nl - p);
        parse_line(k, p, len > VG_KMSG_LINE_MAX ? VG_KMSG_LINE_MAX : len, len > VG_KMSG_LINE_MAX);
        p = nl + 1;
    }
    if (p < end) {
        size_t rest = (size_t)(end - p);
        if (rest <= VG_KMSG_LINE_MAX) {
            memcpy(k->carry, p, rest);
            k->carry_len = rest;
        } else {
            k->carry_len = 0;
            k->carry_over = true;
        }
    }
}

void vg_kmsg_finish(struct vg_kmsg *k)
{
    if (k->carry_len || k->carry_over) {
        k->lines++;
        parse_line(k, k->carry, k->carry_len, k->carry_over);
        k->carry_len = 0;
        k->carry_over = false;
    }
    k->need_next = false;
    flush(k);
}

/* Boot time from /proc/stat's btime (under root), in ms; 0 when unknown. */
int64_t vg_kmsg_boot_ms(const char *root)
{
    char *text = NULL;
    size_t len = 0;
    int64_t ms = 0;
    if (vg_read_file(root, "/proc/stat", 1 << 20, &text, &len) == 0) {
        const char *p = strstr(text, "\nbtime ");
        if (p) ms = strtoll(p + 7, NULL, 10) * 1000;
    }
    free(text);
    return ms;
}

