/* spool.c — the agent's outbox file: append (fsync'd) before send, remove
 * after the acknowledgement, replay after a restart; see spool.h. */
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
    char err[256];
};

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
    static const char hdr[] = "vigil-spool 1 next=";
    while (p < lim) {
        const char *rec = p;
        int64_t seq, n;
        if (rec == text && (size_t)(lim - p) >= sizeof hdr - 1 && !memcmp(p, hdr, sizeof hdr - 1)) {
            p += sizeof hdr - 1;
            if (!num(&p, lim, '\n', &seq) || seq < 1) goto torn;
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

int vg_spool_compact(struct vg_spool *s)
{
    struct sbuf b = SBUF_INIT;
    sbuf_printf(&b, "vigil-spool 1 next=%" PRId64 "\n", s->next_seq);
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
        s->fd = open(s->path, O_WRONLY | O_APPEND | O_CLOEXEC);
        rc = s->fd < 0 ? fail(s, "cannot reopen") : 0;
        /* the queue keeps only the pending messages */
        if (s->head) {
            memmove(s->q, s->q + s->head, (s->n - s->head) * sizeof *s->q);
            s->n -= s->head;
            s->head = 0;
        }
        s->acks = 0;
    }
    sbuf_free(&b);
    sbuf_free(&tmp);
    return rc;
}

struct vg_spool *vg_spool_open(const char *path, char *err, size_t errlen)
{
    char *text = NULL;
    size_t len = 0;
    if (vg_read_file(NULL, path, SPOOL_MAX, &text, &len) < 0 && errno != ENOENT) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    struct vg_spool_data d;
    vg_spool_parse(text ? text : "", len, &d);
    free(text);
    struct vg_spool *s = vg_xcalloc(1, sizeof *s);
    s->path = vg_xstrdup(path);
    s->fd = -1;
    s->q = d.msgs;
    s->n = s->cap = d.n;
    s->next_seq = d.next_seq;
    /* Start from a clean file: the header, the pending messages, no torn tail. */
    if (vg_spool_compact(s) < 0) {
        snprintf(err, errlen, "%s", s->err);
        vg_spool_close(s);
        return NULL;
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

int64_t vg_spool_next_seq(struct vg_spool *s) { return s->next_seq++; }

int vg_spool_append(struct vg_spool *s, int64_t seq, const char *json)
{
    if (s->n == s->cap) {
        if (s->head) {   /* reuse the room of acknowledged messages */
            memmove(s->q, s->q + s->head, (s->n - s->head) * sizeof *s->q);
            s->n -= s->head;
            s->head = 0;
        } else {
            s->cap = s->cap ? s->cap * 2 : 16;
            s->q = vg_xrealloc(s->q, s->cap * sizeof *s->q);
        }
    }
    s->q[s->n].seq = seq;
    s->q[s->n].json = vg_xstrdup(json);
    for (char *c = s->q[s->n].json; *c; c++)
        if (*c == '\n') *c = ' ';   /* one line per record */
    s->n++;
    if (seq >= s->next_seq) s->next_seq = seq + 1;
    struct sbuf b = SBUF_INIT;
    sbuf_printf(&b, "M %" PRId64 " %zu %s\n", seq, strlen(s->q[s->n - 1].json), s->q[s->n - 1].json);
    int rc = 0;
    if (s->fd < 0 || write_all(s->fd, b.s, b.len)) rc = fail(s, "cannot append");
    else if (fdatasync(s->fd)) rc = fail(s, "cannot sync");
    sbuf_free(&b);
    return rc;
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
    if (s->head == s->n || s->acks >= ACKS_BEFORE_COMPACT) return vg_spool_compact(s);
    char rec[40];
    int n = snprintf(rec, sizeof rec, "A %" PRId64 "\n", seq);
    s->acks++;
    /* not synced: an ack lost in a crash only means one duplicate delivery */
    if (s->fd < 0 || write_all(s->fd, rec, (size_t)n)) return fail(s, "cannot append an ack");
    return 0;
}

const char *vg_spool_error(const struct vg_spool *s) { return s->err; }
