/* spool.c — the agent's outbox file: append (fsync'd) before send, remove
 * after the acknowledgement, replay after a restart from an index of the
 * file read in parts, a new random id each life, and the memory-only
 * fallback when the file cannot be written; see spool.h. */
#include "agent/spool.h"
#include "util/log.h"
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
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define GARBAGE_MIN (64u << 10)     /* acknowledged bytes in the file before it is compacted, at least */
#define CHUNK (1u << 20)            /* bytes read (or copied) at a time */

/* One pending message: its JSON in the file (off, len), or in memory. */
struct entry {
    int64_t seq;
    off_t off;                      /* where its JSON starts in the file; -1: in memory only */
    size_t len;
    char *json;                     /* in memory (memory-only, or the head read back); else NULL */
    bool fresh;
    unsigned attempts;
    bool gone;                      /* acknowledged while the file was read */
};

struct vg_spool {
    char *path;
    int fd;                         /* appends */
    int rfd;                        /* reads of messages not in memory */
    off_t size;                     /* the file's length: where the next record lands */
    struct entry *q;                /* q[head..n) are pending */
    size_t head, n, cap;
    size_t bytes;                   /* the pending messages' records, in bytes */
    int64_t next_seq;
    size_t garbage;                 /* bytes in the file of what is no longer pending */
    bool memory;                    /* memory-only: the file could not be written */
    char id[VG_SPOOL_ID_LEN + 1];
    char err[256];
    struct vg_spool_msg view;       /* what vg_spool_at returns */
    char *scratch;                  /* vg_spool_at's JSON of a message not in memory */
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

/* ---- reading a spool, in parts ------------------------------------------ */

/* Bytes of a file (fd) or of a text in memory (fd -1), a window at a time. */
struct reader {
    int fd;
    const char *text;               /* fd -1: all of it */
    char *buf;
    size_t pos, end;                /* buf[pos..end) not yet consumed */
    off_t base;                     /* the offset of buf[0] */
    bool eof;
    int error;                      /* errno of a failed read */
};

static off_t rd_off(const struct reader *r) { return r->base + (off_t)r->pos; }
static const char *rd_ptr(const struct reader *r) { return (r->fd < 0 ? r->text : r->buf) + r->pos; }

/* At least n bytes from pos are there (n <= CHUNK), or all that is left; returns how many are. */
static size_t rd_want(struct reader *r, size_t n)
{
    if (r->end - r->pos >= n || r->fd < 0 || r->eof) return r->end - r->pos;
    memmove(r->buf, r->buf + r->pos, r->end - r->pos);
    r->base += (off_t)r->pos;
    r->end -= r->pos;
    r->pos = 0;
    while (r->end < n && !r->eof) {
        ssize_t got = read(r->fd, r->buf + r->end, CHUNK - r->end);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) r->error = errno;
        if (got <= 0) r->eof = true;
        else r->end += (size_t)got;
    }
    return r->end - r->pos;
}

static bool is_id(const char *p, size_t avail)
{
    if (avail < VG_SPOOL_ID_LEN) return false;
    for (int i = 0; i < VG_SPOOL_ID_LEN; i++)
        if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f'))) return false;
    return true;
}

/* A decimal number of at most 18 digits at r, followed by `end`. */
static bool rd_num(struct reader *r, char end, int64_t *out)
{
    size_t avail = rd_want(r, 20);
    const char *s = rd_ptr(r);
    int64_t v = 0;
    size_t d = 0;
    while (d < avail && s[d] >= '0' && s[d] <= '9' && d < 18) v = v * 10 + (s[d] - '0'), d++;
    if (!d || d >= avail || s[d] != end) return false;
    *out = v;
    r->pos += d + 1;
    return true;
}

static bool rd_lit(struct reader *r, const char *lit)
{
    size_t n = strlen(lit);
    if (rd_want(r, n) < n || memcmp(rd_ptr(r), lit, n)) return false;
    r->pos += n;
    return true;
}

/* n bytes of a message's JSON: no newline or NUL in them, then a newline. */
static bool rd_json(struct reader *r, size_t n)
{
    while (n) {
        size_t avail = rd_want(r, n < CHUNK ? n : CHUNK), k = avail < n ? avail : n;
        if (!k) return false;
        if (memchr(rd_ptr(r), '\n', k) || memchr(rd_ptr(r), '\0', k)) return false;
        r->pos += k;
        n -= k;
    }
    if (rd_want(r, 1) < 1 || *rd_ptr(r) != '\n') return false;
    r->pos++;
    return true;
}

/* What a read of a spool found. */
struct index {
    struct entry *e;
    size_t n, cap, first;           /* first: no entry before it is still pending */
    int64_t next_seq;
    char id[VG_SPOOL_ID_LEN + 1];
    size_t records;
    bool bad, v1;
    off_t valid;                    /* where the valid records end */
};

static void ix_push(struct index *x, int64_t seq, off_t off, size_t len)
{
    if (x->n == x->cap) x->e = vg_xrealloc(x->e, (x->cap = x->cap ? x->cap * 2 : 64) * sizeof *x->e);
    x->e[x->n++] = (struct entry){ .seq = seq, .off = off, .len = len };
}

/* An ack: the first pending entry with seq (acks come in order, so the
 * search almost always ends at once). */
static void ix_drop(struct index *x, int64_t seq)
{
    for (size_t i = x->first; i < x->n; i++)
        if (!x->e[i].gone && x->e[i].seq == seq) {
            x->e[i].gone = true;
            break;
        }
    while (x->first < x->n && x->e[x->first].gone) x->first++;
}

/* Reads the records up to the end or the first torn one. */
static void ix_read(struct reader *r, struct index *x)
{
    memset(x, 0, sizeof *x);
    x->next_seq = 1;
    for (;;) {
        off_t rec = rd_off(r);
        size_t avail = rd_want(r, 2);
        if (!avail) break;
        int64_t seq, n;
        const char *p = rd_ptr(r);
        bool ok;
        if (rec == 0 && p[0] == 'v') {
            if (rd_lit(r, "vigil-spool 1 next=")) {
                ok = rd_num(r, '\n', &seq) && seq >= 1;
                x->v1 = true;
            } else if (rd_lit(r, "vigil-spool 2 id=") && is_id(rd_ptr(r), rd_want(r, VG_SPOOL_ID_LEN))) {
                memcpy(x->id, rd_ptr(r), VG_SPOOL_ID_LEN);
                r->pos += VG_SPOOL_ID_LEN;
                ok = rd_lit(r, " next=") && rd_num(r, '\n', &seq) && seq >= 1;
                if (!ok) x->id[0] = 0;
            } else {
                ok = false;
            }
            if (ok) x->next_seq = seq;
        } else if (avail >= 2 && p[0] == 'M' && p[1] == ' ') {
            r->pos += 2;
            ok = rd_num(r, ' ', &seq) && rd_num(r, ' ', &n) && n >= 2 && (uint64_t)n <= VG_SPOOL_RECORD_MAX;
            off_t at = rd_off(r);
            ok = ok && rd_json(r, (size_t)n);
            if (ok) {
                ix_push(x, seq, at, (size_t)n);
                if (seq >= x->next_seq) x->next_seq = seq + 1;
            }
        } else if (avail >= 2 && p[0] == 'A' && p[1] == ' ') {
            r->pos += 2;
            ok = rd_num(r, '\n', &seq);
            if (ok) ix_drop(x, seq);
        } else {
            ok = false;
        }
        if (!ok) {
            x->bad = true;
            x->valid = rec;
            return;
        }
        x->records++;
    }
    x->valid = rd_off(r);
}

/* The pending entries, in order (acknowledged ones removed). */
static void ix_pending(struct index *x)
{
    size_t k = 0;
    for (size_t i = 0; i < x->n; i++)
        if (!x->e[i].gone) x->e[k++] = x->e[i];
    x->n = k;
}

void vg_spool_parse(const char *text, size_t len, struct vg_spool_data *d)
{
    memset(d, 0, sizeof *d);
    struct reader r = { .fd = -1, .text = text, .end = len, .eof = true };
    struct index x;
    ix_read(&r, &x);
    ix_pending(&x);
    d->msgs = vg_xcalloc(x.n + 1, sizeof *d->msgs);
    for (size_t i = 0; i < x.n; i++)
        d->msgs[i] = (struct vg_spool_msg){ .seq = x.e[i].seq, .json = vg_xstrndup(text + x.e[i].off, x.e[i].len) };
    d->n = x.n;
    d->next_seq = x.next_seq;
    memcpy(d->id, x.id, sizeof d->id);
    d->records = x.records;
    d->bad = x.bad;
    free(x.e);
}

void vg_spool_data_free(struct vg_spool_data *d)
{
    for (size_t i = 0; i < d->n; i++) free(d->msgs[i].json);
    free(d->msgs);
    memset(d, 0, sizeof *d);
}

/* ---- the spool ------------------------------------------------------------ */

static int fail(struct vg_spool *s, const char *what)
{
    snprintf(s->err, sizeof s->err, "%s: %s: %s", s->path, what, strerror(errno));
    return -1;
}

/* The bytes of a message's record: "M SEQ LEN JSON\n". */
static size_t record_bytes(int64_t seq, size_t len)
{
    char head[48];
    return (size_t)snprintf(head, sizeof head, "M %" PRId64 " %zu ", seq, len) + len + 1;
}

/* Reads entry e's JSON from the file into a malloc'd string; NULL when it cannot. */
static char *load(struct vg_spool *s, const struct entry *e)
{
    if (e->json) return vg_xstrdup(e->json);
    char *j = vg_xmalloc(e->len + 1);
    size_t got = 0;
    while (s->rfd >= 0 && got < e->len) {
        ssize_t r = pread(s->rfd, j + got, e->len - got, e->off + (off_t)got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += (size_t)r;
    }
    if (got < e->len) {
        fail(s, "cannot read a message back");
        free(j);
        return NULL;
    }
    j[e->len] = 0;
    return j;
}

/* The file failed us (what: the step, errno: why): from now on the spool
 * lives in memory only, under a new id, so no later reader of the file
 * confuses what this life hands out with what it holds.  Messages still in
 * the file are read from it when they are sent, as before. */
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

/* Copies entry e's record into fd at *at; its JSON's new offset in *off. */
static int copy_record(struct vg_spool *s, int fd, const struct entry *e, off_t *at, off_t *off)
{
    char head[48];
    int hn = snprintf(head, sizeof head, "M %" PRId64 " %zu ", e->seq, e->len);
    if (write_all(fd, head, (size_t)hn)) return -1;
    *off = *at + hn;
    if (e->json) {
        if (write_all(fd, e->json, e->len)) return -1;
    } else {
        static char buf[64 << 10];
        for (size_t done = 0; done < e->len;) {
            size_t want = e->len - done < sizeof buf ? e->len - done : sizeof buf;
            ssize_t r = pread(s->rfd, buf, want, e->off + (off_t)done);
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) return errno = r ? errno : EIO, -1;
            if (write_all(fd, buf, (size_t)r)) return -1;
            done += (size_t)r;
        }
    }
    if (write_all(fd, "\n", 1)) return -1;
    *at += hn + (off_t)e->len + 1;
    return 0;
}

int vg_spool_compact(struct vg_spool *s)
{
    if (s->memory) {
        trim(s);
        return 0;
    }
    struct sbuf tmp = SBUF_INIT;
    sbuf_printf(&tmp, "%s.tmp", s->path);
    size_t pending = s->n - s->head;
    off_t *offs = vg_xcalloc(pending + 1, sizeof *offs);
    char hdr[96];
    int hn = snprintf(hdr, sizeof hdr, "vigil-spool 2 id=%s next=%" PRId64 "\n", s->id, s->next_seq);
    off_t at = hn;
    int rc = -1, fd = open(tmp.s, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    bool ok = fd >= 0 && write_all(fd, hdr, (size_t)hn) == 0;
    for (size_t i = 0; ok && i < pending; i++) ok = copy_record(s, fd, &s->q[s->head + i], &at, &offs[i]) == 0;
    if (fd < 0) fail(s, "cannot write the compacted spool");
    else if (!ok || fsync(fd)) {
        fail(s, "cannot write the compacted spool");
        close(fd);
        unlink(tmp.s);
    } else if (close(fd) || rename(tmp.s, s->path)) {
        fail(s, "cannot replace the spool");
        unlink(tmp.s);
    } else {
        fsync_dir(s->path);
        if (s->fd >= 0) close(s->fd);
        if (s->rfd >= 0) close(s->rfd);
        /* the file holds the queue now; if it cannot be reopened the next
         * append finds no fd and turns the spool memory-only */
        s->fd = open(s->path, O_WRONLY | O_APPEND | O_CLOEXEC);
        s->rfd = open(s->path, O_RDONLY | O_CLOEXEC);
        if (s->fd < 0 || s->rfd < 0) fail(s, "cannot reopen");
        rc = 0;
        trim(s);
        for (size_t i = 0; i < pending; i++) {
            s->q[i].off = offs[i];
            if (i) {   /* only the head keeps its JSON in memory */
                free(s->q[i].json);
                s->q[i].json = NULL;
            }
        }
        s->size = at;
        s->garbage = 0;
    }
    free(offs);
    sbuf_free(&tmp);
    return rc;
}

/* Bytes of the pending records, counted again. */
static void count_bytes(struct vg_spool *s)
{
    s->bytes = 0;
    for (size_t i = s->head; i < s->n; i++) s->bytes += record_bytes(s->q[i].seq, s->q[i].len);
}

struct vg_spool *vg_spool_open(const char *path, char *err, size_t errlen)
{
    struct vg_spool *s = vg_xcalloc(1, sizeof *s);
    s->path = vg_xstrdup(path);
    s->fd = s->rfd = -1;
    s->next_seq = 1;
    if (errlen) *err = 0;
    new_id(s->id);   /* a new life, whatever the file says */
    s->rfd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    bool unreadable = s->rfd < 0 && errno != ENOENT;
    if (s->rfd >= 0 && (fstat(s->rfd, &st) || !S_ISREG(st.st_mode))) {
        if (!S_ISREG(st.st_mode)) errno = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
        close(s->rfd);
        s->rfd = -1;
        unreadable = true;
    }
    if (unreadable) {
        to_memory(s, "cannot read");
        snprintf(err, errlen, "%s", s->err);
        return s;
    }
    struct index x;
    if (s->rfd >= 0) {
        struct reader r = { .fd = s->rfd, .buf = vg_xmalloc(CHUNK) };
        ix_read(&r, &x);
        free(r.buf);
        if (r.error) {
            errno = r.error;
            fail(s, "cannot read it all: what was read is kept");
            vg_err("agent: spool %s", s->err);
        }
    } else {
        memset(&x, 0, sizeof x);
        x.next_seq = 1;
    }
    ix_pending(&x);
    s->q = x.e;
    s->n = s->cap = x.n;
    s->next_seq = x.next_seq;
    s->size = x.valid;
    count_bytes(s);
    s->garbage = (size_t)x.valid > s->bytes ? (size_t)x.valid - s->bytes : 0;
    /* A file with a torn tail or an old header, or more acknowledged bytes
     * than pending ones, is rewritten (its pending messages copied over, a
     * part at a time); any other is appended to as it is. */
    bool dirty = x.bad || x.v1 || !x.records || (s->garbage >= GARBAGE_MIN && s->garbage >= s->bytes);
    if (dirty ? vg_spool_compact(s) < 0
              : (s->fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC)) < 0 && fail(s, "cannot open for appending")) {
        to_memory(s, NULL);
        snprintf(err, errlen, "%s", s->err);
    }
    return s;
}

void vg_spool_close(struct vg_spool *s)
{
    if (!s) return;
    if (s->fd >= 0) close(s->fd);
    if (s->rfd >= 0) close(s->rfd);
    for (size_t i = s->head; i < s->n; i++) free(s->q[i].json);
    free(s->q);
    free(s->scratch);
    free(s->path);
    free(s);
}

const char *vg_spool_id(const struct vg_spool *s) { return s->id; }

int vg_spool_new_life(struct vg_spool *s)
{
    new_id(s->id);
    return 0;
}

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
    size_t len = strlen(line);
    off_t off = -1;
    if (!s->memory) {
        struct sbuf b = SBUF_INIT;
        sbuf_printf(&b, "M %" PRId64 " %zu ", seq, len);
        off = s->size + (off_t)b.len;
        sbuf_add(&b, line, len);
        sbuf_add(&b, "\n", 1);
        int bad = s->fd < 0 ? 3 : write_all(s->fd, b.s, b.len) ? 1 : fdatasync(s->fd) ? 2 : 0;
        if (!bad) s->size += (off_t)b.len;
        sbuf_free(&b);
        if (bad) {
            free(line);
            return to_memory(s, bad == 1 ? "cannot append" : bad == 2 ? "cannot sync" : NULL);
        }
    }
    reserve(s, 1);
    /* in memory when memory-only, or when it is the head (about to be sent) */
    bool keep = s->memory || s->head == s->n;
    s->q[s->n++] = (struct entry){ .seq = seq, .off = off, .len = len, .json = keep ? line : NULL, .fresh = true };
    if (!keep) free(line);
    s->bytes += record_bytes(seq, len);
    if (seq >= s->next_seq) s->next_seq = seq + 1;
    return 0;
}

/* Makes the pending queue `repl` (n entries: the old queue's entries moved
 * over, and new ones: made[k]) and persists it.  replaced[i]: old entry i is
 * not in repl.  On failure the old queue comes back as it was and the spool
 * turns memory-only. */
static int swap_queue(struct vg_spool *s, struct entry *repl, size_t n, const bool *replaced, const bool *made)
{
    struct entry *old = s->q;
    size_t oldn = s->n, oldcap = s->cap;
    s->q = repl;
    s->n = s->cap = n;
    if (vg_spool_compact(s) == 0) {
        count_bytes(s);
        for (size_t i = 0; i < oldn; i++)
            if (replaced[i]) free(old[i].json);
        free(old);
        return 0;
    }
    for (size_t k = 0; k < n; k++)
        if (made[k]) free(repl[k].json);
    free(repl);
    s->q = old;
    s->n = oldn;
    s->cap = oldcap;
    return to_memory(s, NULL);
}

static struct entry new_entry(int64_t seq, const char *json)
{
    char *line = one_line(json);
    return (struct entry){ .seq = seq, .off = -1, .len = strlen(line), .json = line, .fresh = true };
}

int vg_spool_replace_head(struct vg_spool *s, const int64_t *seqs, char *const *jsons, size_t n)
{
    if (s->head >= s->n || !n) return 0;
    trim(s);
    struct entry *q = vg_xcalloc(s->n - 1 + n, sizeof *q);
    bool *replaced = vg_xcalloc(s->n, sizeof *replaced), *made = vg_xcalloc(s->n - 1 + n, sizeof *made);
    for (size_t i = 0; i < n; i++) q[i] = new_entry(seqs[i], jsons[i]), made[i] = true;
    memcpy(q + n, s->q + 1, (s->n - 1) * sizeof *q);
    replaced[0] = true;
    int rc = swap_queue(s, q, s->n - 1 + n, replaced, made);
    free(replaced);
    free(made);
    return rc;
}

int vg_spool_edit(struct vg_spool *s, const size_t *idx, const int64_t *seqs, char *const *jsons, size_t n)
{
    if (!n) return 0;
    trim(s);
    struct entry *q = vg_xcalloc(s->n + 1, sizeof *q);
    bool *replaced = vg_xcalloc(s->n + 1, sizeof *replaced), *made = vg_xcalloc(s->n + 1, sizeof *made);
    size_t k = 0, e = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (e < n && idx[e] == i) {
            if (jsons[e]) made[k] = true, q[k++] = new_entry(seqs[e], jsons[e]);
            replaced[i] = true;
            e++;
        } else {
            q[k++] = s->q[i];
        }
    }
    int rc = swap_queue(s, q, k, replaced, made);
    free(replaced);
    free(made);
    return rc;
}

const struct vg_spool_msg *vg_spool_at(struct vg_spool *s, size_t i)
{
    if (s->head + i >= s->n) return NULL;
    struct entry *e = &s->q[s->head + i];
    free(s->scratch);
    s->scratch = NULL;
    const char *json = e->json;
    if (!json) json = s->scratch = load(s, e);
    if (!json) return NULL;
    s->view = (struct vg_spool_msg){ .seq = e->seq, .json = (char *)json, .fresh = e->fresh, .attempts = e->attempts };
    return &s->view;
}

const struct vg_spool_msg *vg_spool_head(struct vg_spool *s)
{
    while (s->head < s->n) {
        struct entry *e = &s->q[s->head];
        if (!e->json) e->json = load(s, e);   /* kept until it is acknowledged */
        if (e->json) {
            s->view = (struct vg_spool_msg){ .seq = e->seq, .json = e->json, .fresh = e->fresh,
                                             .attempts = e->attempts };
            return &s->view;
        }
        vg_err("agent: spool message %" PRId64 " dropped: %s", e->seq, s->err);
        vg_spool_ack_head(s);
    }
    return NULL;
}

void vg_spool_head_tried(struct vg_spool *s)
{
    if (s->head < s->n) s->q[s->head].attempts++;
}

size_t vg_spool_pending(const struct vg_spool *s) { return s->n - s->head; }

size_t vg_spool_bytes(const struct vg_spool *s) { return s->bytes; }

int vg_spool_ack_head(struct vg_spool *s)
{
    if (s->head >= s->n) return 0;
    struct entry *e = &s->q[s->head];
    int64_t seq = e->seq;
    size_t rb = record_bytes(seq, e->len);
    s->bytes -= rb;
    free(e->json);
    e->json = NULL;
    s->head++;
    if (s->memory) return 0;
    char rec[40];
    int n = snprintf(rec, sizeof rec, "A %" PRId64 "\n", seq);
    s->garbage += rb + (size_t)n;
    /* compacted when empty, or once the dead bytes outweigh the live ones:
     * draining a large spool copies each byte a bounded number of times */
    if (s->head == s->n || (s->garbage >= GARBAGE_MIN && s->garbage >= s->bytes)) return vg_spool_compact(s);
    /* not synced: an ack lost in a crash only means one duplicate delivery */
    if (s->fd < 0 || write_all(s->fd, rec, (size_t)n)) return fail(s, "cannot append an ack");
    s->size += n;
    return 0;
}

const char *vg_spool_error(const struct vg_spool *s) { return s->err; }
