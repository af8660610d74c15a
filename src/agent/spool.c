/* spool.c — the agent's outbox file: append (fsync'd) before send, remove
 * after the acknowledgement, replay after a restart, the spool's random id,
 * and the memory-only fallback when the file cannot be written; see spool.h. */
#include "agent/spool.h"
#include "util/rootfs.h"
#include "util/sbuf.h"
#include "util/strutil.h"
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#define SPOOL_MAX (256u << 20)     /* a spool larger than this is not read */
#define ACKS_BEFORE_COMPACT 256

struct vg_spool {
    char *path;
    int fd;
    struct vg_spool_msg *q;        /* q[head..n) are pending */
    size_t head, n, cap;
    int64_t next_seq;
    unsigned acks;                 /* ack records since the last compaction */
    bool memory;                   /* memory-only: the file could not be written */
    char id[VG_SPOOL_ID_LEN + 1];
    char err[256];
};

/* A fresh spool id: VG_SPOOL_ID_LEN hex characters from getrandom(2) (or
 * /dev/urandom where that is missing; a clock and pid mix as the last
 * resort, still unique enough to tell two lives of a spool apart). */
static void new_id(char out[VG_SPOOL_ID_LEN + 1])
{
    unsigned char r[VG_SPOOL_ID_LEN / 2];
    size_t got = 0;
    while (got < sizeof r) {
        ssize_t n = getrandom(r + got, sizeof r - got, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += (size_t)n;
    }
    if (got < sizeof r) {
        FILE *f = fopen("/dev/urandom", "rbe");
        got = f ? fread(r, 1, sizeof r, f) : 0;
        if (f) fclose(f);
    }
    if (got < sizeof r) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t x = ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec) ^ ((uint64_t)getpid() << 40);
        for (size_t i = 0; i < sizeof r; i++, x = x * 6364136223846793005u + 1442695040888963407u)
            r[i] = (unsigned char)(x >> 56);
    }
    for (size_t i = 0; i < sizeof r; i++) snprintf(out + 2 * i, 3, "%02x", r[i]);
}

static bool is_id(const char *p, const char *lim)
{
    if (lim - p < VG_SPOOL_ID_LEN) return false;
    for (int i = 0; i < VG_SPOOL_ID_LEN; i++)
        if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f'))) return false;
    return true;
}

/* A decimal number of at most 18 digits at *p, followed by `end`. */
static bool num(const char **p, const char *lim, char end, int64_t *out)
{
    const char *s = *p;
    int64_t v = 0;
    int digits = 0;
    while (s < lim && *s >= '0' && *s <= '9' && digits < 18) v = v * 10 + (*s++ - '0'), digits++;
    if (!digits || s >= lim || *s != end) return false;
    *out = v;
    *p = s + 1;
    return true;
}

static void push(struct vg_spool_data *d, int64_t seq, const char *json, size_t len)
{
    if (d->n % 16 == 0) d->msgs = vg_xrealloc(d->msgs, (d->n + 16) * sizeof *d->msgs);
    d->msgs[d->n].seq = seq;
    d->msgs[d->n].json = vg_xstrndup(json, len);
    d->n++;
}

static void drop(struct vg_spool_data *d, int64_t seq)
{
    for (size_t i = 0; i < d->n; i++)
        if (d->msgs[i].seq == seq) {
            free(d->msgs[i].json);
            memmove(&d->msgs[i], &d->msgs[i + 1], (d->n - i - 1) * sizeof *d->msgs);
            d->n--;
            return;
        }
}

void vg_spool_parse(const char *text, size_t len, struct vg_spool_data *d)
{
    memset(d, 0, sizeof *d);
    d->next_seq = 1;
    const char *p = text, *lim = text + len;
    static const char hdr1[] = "vigil-spool 1 next=", hdr2[] = "vigil-spool 2 id=";
    while (p < lim) {
        const char *rec = p;
        int64_t seq, n;
        if (rec == text && (size_t)(lim - p) >= sizeof hdr1 - 1 && !memcmp(p, hdr1, sizeof hdr1 - 1)) {
            p += sizeof hdr1 - 1;
            if (!num(&p, lim, '\n', &seq) || seq < 1) goto torn;
            d->next_seq = seq;
        } else if (rec == text && (size_t)(lim - p) >= sizeof hdr2 - 1 && !memcmp(p, hdr2, sizeof hdr2 - 1)) {
            p += sizeof hdr2 - 1;
            if (!is_id(p, lim)) goto torn;
            const char *id = p;
            p += VG_SPOOL_ID_LEN;
            if (lim - p < 6 || memcmp(p, " next=", 6)) goto torn;
            p += 6;
            if (!num(&p, lim, '\n', &seq) || seq < 1) goto torn;
            memcpy(d->id, id, VG_SPOOL_ID_LEN);
            d->id[VG_SPOOL_ID_LEN] = 0;
            d->next_seq = seq;
        } else if (lim - p >= 2 && p[0] == 'M' && p[1] == ' ') {
            p += 2;
            if (!num(&p, lim, ' ', &seq) || !num(&p, lim, ' ', &n) || n < 2 || n > lim - p - 1 || p[n] != '\n' ||
                memchr(p, '\n', (size_t)n) || memchr(p, '\0', (size_t)n))
                goto torn;
            push(d, seq, p, (size_t)n);
            if (seq >= d->next_seq) d->next_seq = seq + 1;
            p += n + 1;
        } else if (lim - p >= 2 && p[0] == 'A' && p[1] == ' ') {
            p += 2;
            if (!num(&p, lim, '\n', &seq)) goto torn;
            drop(d, seq);
        } else
            goto torn;
        d->records++;
        continue;
    torn:
        d->bad = 1;   /* rec is where the valid prefix ends */
        return;
    }
}

void vg_spool_data_free(struct vg_spool_data *d)
{
    for (size_t i = 0; i < d->n; i++) free(d->msgs[i].json);
    free(d->msgs);
    memset(d, 0, sizeof *d);
}

static int fail(struct vg_spool *s, const char *what)
{
    snprintf(s->err, sizeof s->err, "%s: %s: %s", s->path, what, strerror(errno));
    return -1;
}

/* The file failed us (what: the step, errno: why): from now on the spool
 * lives in memory only, under a new id that no file holds, so a later life
 * of the file never reuses the (id, seq) pairs this one hands out.  The seqs
 * go on from where the file's were. */
static int to_memory(struct vg_spool *s, const char *what)
{
    if (what) fail(s, what);   /* else s->err already says why */
    if (s->fd >= 0) close(s->fd);
    s->fd = -1;
    s->memory = true;
    new_id(s->id);
    return -1;
}

static int write_all(int fd, const char *buf, size_t n)
{
    while (n) {
        ssize_t w = write(fd, buf, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        buf += w, n -= (size_t)w;
    }
    return 0;
}

static void fsync_dir(const char *path)
{
    char *copy = vg_xstrdup(path);
    int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
    free(copy);
}

/* The queue keeps only the pending messages. */
static void trim(struct vg_spool *s)
{
    if (!s->head) return;
    memmove(s->q, s->q + s->head, (s->n - s->head) * sizeof *s->q);
    s->n -= s->head;
    s->head = 0;
}

int vg_spool_compact(struct vg_spool *s)
{
    if (s->memory) {
        trim(s);
        return 0;
    }
    struct sbuf b = SBUF_INIT;
    sbuf_printf(&b, "vigil-spool 2 id=%s next=%" PRId64 "\n", s->id, s->next_seq);
    for (size_t i = s->head; i < s->n; i++)
        sbuf_printf(&b, "M %" PRId64 " %zu %s\n", s->q[i].seq, strlen(s->q[i].json), s->q[i].json);
    struct sbuf tmp = SBUF_INIT;
    sbuf_printf(&tmp, "%s.tmp", s->path);
    int rc = -1, fd = open(tmp.s, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) fail(s, "cannot write the compacted spool");
    else if (write_all(fd, b.s, b.len) || fsync(fd)) {
        fail(s, "cannot write the compacted spool");
        close(fd);
        unlink(tmp.s);
    } else if (close(fd) || rename(tmp.s, s->path)) {
        fail(s, "cannot replace the spool");
        unlink(tmp.s);
    } else {
        fsync_dir(s->path);
        if (s->fd >= 0) close(s->fd);
        /* the file holds the queue now; if it cannot be reopened the next
         * append finds no fd and turns the spool memory-only */
        s->fd = open(s->path, O_WRONLY | O_APPEND | O_CLOEXEC);
        if (s->fd < 0) fail(s, "cannot reopen");
        rc = 0;
        trim(s);
        s->acks = 0;
    }
    sbuf_free(&b);
    sbuf_free(&tmp);
    return rc;
}

struct vg_spool *vg_spool_open(const char *path, char *err, size_t errlen)
{
    struct vg_spool *s = vg_xcalloc(1, sizeof *s);
    s->path = vg_xstrdup(path);
    s->fd = -1;
    s->next_seq = 1;
    if (errlen) *err = 0;
    char *text = NULL;
    size_t len = 0;
    if (vg_read_file(NULL, path, SPOOL_MAX, &text, &len) < 0 && errno != ENOENT) {
        to_memory(s, "cannot read");
        snprintf(err, errlen, "%s", s->err);
        return s;
    }
    struct vg_spool_data d;
    vg_spool_parse(text ? text : "", len, &d);
    free(text);
    s->q = d.msgs;
    s->n = s->cap = d.n;
    s->next_seq = d.next_seq;
    if (d.id[0]) memcpy(s->id, d.id, sizeof s->id);
    else new_id(s->id);   /* a new spool, or one from before spools had ids */
    /* Start from a clean file: the header, the pending messages, no torn tail.
     * Failing that, what was read is still delivered, from memory. */
    if (vg_spool_compact(s) < 0) {
        to_memory(s, NULL);
        snprintf(err, errlen, "%s", s->err);
    }
    return s;
}

void vg_spool_close(struct vg_spool *s)
{
    if (!s) return;
    if (s->fd >= 0) close(s->fd);
    for (size_t i = s->head; i < s->n; i++) free(s->q[i].json);
    free(s->q);
    free(s->path);
    free(s);
}

const char *vg_spool_id(const struct vg_spool *s) { return s->id; }

bool vg_spool_memory_only(const struct vg_spool *s) { return s->memory; }

int64_t vg_spool_next_seq(struct vg_spool *s) { return s->next_seq++; }

/* One line per record: a newline in the JSON (there is none in compact
 * JSON, but the caller's text is not trusted) becomes a space. */
static char *one_line(const char *json)
{
    char *copy = vg_xstrdup(json);
    for (char *c = copy; *c; c++)
        if (*c == '\n') *c = ' ';
    return copy;
}

/* Room for `more` messages at the end of the queue. */
static void reserve(struct vg_spool *s, size_t more)
{
    if (s->n + more <= s->cap) return;
    trim(s);   /* reuse the room of acknowledged messages */
    if (s->n + more <= s->cap) return;
    while (s->cap < s->n + more) s->cap = s->cap ? s->cap * 2 : 16;
    s->q = vg_xrealloc(s->q, s->cap * sizeof *s->q);
}

int vg_spool_append(struct vg_spool *s, int64_t seq, const char *json)
{
    char *line = one_line(json);
    if (!s->memory) {
        struct sbuf b = SBUF_INIT;
        sbuf_printf(&b, "M %" PRId64 " %zu %s\n", seq, strlen(line), line);
        int bad = s->fd < 0 ? 3 : write_all(s->fd, b.s, b.len) ? 1 : fdatasync(s->fd) ? 2 : 0;
        sbuf_free(&b);
        if (bad) {
            free(line);
            return to_memory(s, bad == 1 ? "cannot append" : bad == 2 ? "cannot sync" : NULL);
        }
    }
    reserve(s, 1);
    s->q[s->n].seq = seq;
    s->q[s->n].json = line;
    s->n++;
    if (seq >= s->next_seq) s->next_seq = seq + 1;
    return 0;
}

int vg_spool_replace_head(struct vg_spool *s, const int64_t *seqs, char *const *jsons, size_t n)
{
    if (s->head >= s->n || !n) return 0;
    trim(s);   /* the head is at q[0] now */
    reserve(s, n - 1);
    struct vg_spool_msg old = s->q[0];
    memmove(s->q + n, s->q + 1, (s->n - 1) * sizeof *s->q);
    for (size_t i = 0; i < n; i++) s->q[i] = (struct vg_spool_msg){ seqs[i], one_line(jsons[i]) };
    s->n += n - 1;
    if (vg_spool_compact(s) == 0) {
        free(old.json);
        return 0;
    }
    /* put the head back as it was: the file still holds it */
    for (size_t i = 0; i < n; i++) free(s->q[i].json);
    memmove(s->q + 1, s->q + n, (s->n - n) * sizeof *s->q);
    s->n -= n - 1;
    s->q[0] = old;
    return to_memory(s, NULL);
}

const struct vg_spool_msg *vg_spool_head(const struct vg_spool *s) { return s->head < s->n ? &s->q[s->head] : NULL; }

size_t vg_spool_pending(const struct vg_spool *s) { return s->n - s->head; }

int vg_spool_ack_head(struct vg_spool *s)
{
    if (s->head >= s->n) return 0;
    int64_t seq = s->q[s->head].seq;
    free(s->q[s->head].json);
    s->q[s->head].json = NULL;
    s->head++;
    if (s->memory) return 0;
    if (s->head == s->n || s->acks >= ACKS_BEFORE_COMPACT) return vg_spool_compact(s);
    char rec[40];
    int n = snprintf(rec, sizeof rec, "A %" PRId64 "\n", seq);
    s->acks++;
    /* not synced: an ack lost in a crash only means one duplicate delivery */
    if (s->fd < 0 || write_all(s->fd, rec, (size_t)n)) return fail(s, "cannot append an ack");
    return 0;
}

const char *vg_spool_error(const struct vg_spool *s) { return s->err; }
