/* kfollow.c — the agent's kernel-log source.  /dev/kmsg (or a FIFO) is polled
 * directly: each read returns one record.  A regular file is followed like
 * `tail -F`: inotify says when it changed, and only the new bytes are read.
 * What changed is told by the file itself, not by the offset alone: another
 * inode is a replaced file (log rotation), a size below the offset is a
 * truncation, and first bytes or bytes before the offset that differ from
 * those read are a file truncated and refilled past the offset before the
 * agent looked — each read again from its start.  No sleeps, no polling. */
#include "agent/agent_int.h"
#include "util/log.h"
#include "util/rootfs.h"
#include "util/strutil.h"
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#define KF_BUF 8192

static void on_kmsg(const struct vg_event *e, void *arg)
{
    struct vg_event c = *e;
    agent_signal(arg, &c);
}

#define MIN(x, y) ((x) < (y) ? (x) : (y))

/* Remembers n bytes read at `at` (the file's first bytes, the last ones). */
static void remember(struct kfollow *kf, const char *buf, size_t n, off_t at)
{
    if (at < (off_t)sizeof kf->head) {
        size_t take = MIN(n, sizeof kf->head - (size_t)at);
        memcpy(kf->head + at, buf, take);
        if ((size_t)at + take > kf->head_len) kf->head_len = (size_t)at + take;
    }
    size_t keep = n >= sizeof kf->tail ? 0 : MIN(kf->tail_len, sizeof kf->tail - n);
    memmove(kf->tail, kf->tail + kf->tail_len - keep, keep);
    size_t add = MIN(n, sizeof kf->tail);
    memcpy(kf->tail + keep, buf + n - add, add);
    kf->tail_len = keep + add;
}

/* Reads len bytes at `at` into buf; true when all came. */
static bool read_at(int fd, char *buf, size_t len, off_t at)
{
    return pread(fd, buf, len, at) == (ssize_t)len;
}

/* Starts over at offset `at` (0, or the end of a file opened at its end). */
static void restart_at(struct kfollow *kf, off_t at)
{
    kf->off = at;
    kf->head_len = kf->tail_len = 0;
    char b[sizeof kf->head];
    if (!at) return;
    size_t h = (size_t)MIN(at, (off_t)sizeof b);
    if (read_at(kf->fd, b, h, 0)) remember(kf, b, h, 0);
    kf->tail_len = 0;
    size_t t = (size_t)MIN(at, (off_t)sizeof b);
    if (read_at(kf->fd, b, t, at - (off_t)t)) remember(kf, b, t, at - (off_t)t);
}

/* Does the file still hold, at its start and just before the offset, what
 * was read there? */
static bool same_bytes(const struct kfollow *kf)
{
    char b[sizeof kf->head];
    if (kf->head_len && (!read_at(kf->fd, b, kf->head_len, 0) || memcmp(b, kf->head, kf->head_len))) return false;
    if (kf->tail_len && (!read_at(kf->fd, b, kf->tail_len, kf->off - (off_t)kf->tail_len) ||
                         memcmp(b, kf->tail, kf->tail_len)))
        return false;
    return true;
}

/* Opens the followed file (when it exists), at its end unless from_start. */
static void open_file(struct agent *a, bool at_end)
{
    struct kfollow *kf = &a->kf;
    kf->fd = open(kf->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (kf->fd < 0) return;
    struct stat st;
    fstat(kf->fd, &st);
    kf->dev = st.st_dev, kf->inode = st.st_ino;
    off_t end = at_end ? lseek(kf->fd, 0, SEEK_END) : 0;
    restart_at(kf, end < 0 ? 0 : end);
}

int kf_open(struct agent *a, char *err, size_t errlen)
{
    struct kfollow *kf = &a->kf;
    kf->fd = kf->ino = -1;
    kf->path = vg_xstrdup(a->o->kmsg ? a->o->kmsg : "/dev/kmsg");
    kf->buf = vg_xmalloc(KF_BUF + 1);
    struct stat st;
    bool exists = stat(kf->path, &st) == 0;
    kf->stream = exists && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode));
    /* Boot-relative stamps only mean something for the live kernel log. */
    struct vg_kmsg_opts ko = { exists && S_ISCHR(st.st_mode) ? vg_kmsg_boot_ms(NULL) : 0, 0, a->node };
    vg_kmsg_init(&kf->k, &ko, on_kmsg, a);
    if (kf->stream) {
        /* a FIFO opened read-write never reports end-of-file when a writer leaves */
        kf->fd = open(kf->path, (S_ISFIFO(st.st_mode) ? O_RDWR : O_RDONLY) | O_NONBLOCK | O_CLOEXEC);
        if (kf->fd < 0) return snprintf(err, errlen, "%s: %s", kf->path, strerror(errno)), -1;
        if (S_ISCHR(st.st_mode) && !a->o->kmsg_from_start) lseek(kf->fd, 0, SEEK_END);
        return 0;
    }
    kf->ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (kf->ino < 0) return snprintf(err, errlen, "inotify: %s", strerror(errno)), -1;
    char *copy = vg_xstrdup(kf->path), *bcopy = vg_xstrdup(kf->path);
    vg_strlcpy(kf->base, basename(bcopy), sizeof kf->base);
    free(bcopy);
    int wd = inotify_add_watch(kf->ino, dirname(copy), IN_MODIFY | IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_ATTRIB);
    free(copy);
    if (wd < 0) return snprintf(err, errlen, "%s: cannot watch its directory: %s", kf->path, strerror(errno)), -1;
    open_file(a, !a->o->kmsg_from_start);
    if (kf->fd < 0 && errno != ENOENT) return snprintf(err, errlen, "%s: %s", kf->path, strerror(errno)), -1;
    if (kf->fd < 0) vg_warn("agent: %s does not exist yet; waiting for it", kf->path);
    return 0;
}

int kf_fd(const struct agent *a) { return a->kf.stream ? a->kf.fd : a->kf.ino; }

/* Flushes an event the parser holds back for continuation lines, unless a
 * partial line is still waiting for its end. */
static void settle(struct kfollow *kf)
{
    if (!kf->k.carry_len && !kf->k.carry_over) vg_kmsg_finish(&kf->k);
}

static void read_stream(struct agent *a)
{
    struct kfollow *kf = &a->kf;
    for (;;) {
        ssize_t n = read(kf->fd, kf->buf, KF_BUF);
        if (n > 0) {
            vg_kmsg_feed(&kf->k, kf->buf, (size_t)n);
            if (kf->buf[n - 1] != '\n') vg_kmsg_feed(&kf->k, "\n", 1);   /* a kmsg record */
            continue;
        }
        if (n < 0 && (errno == EINTR || errno == EPIPE)) continue;   /* EPIPE: records overwritten */
        break;
    }
    settle(kf);
}

/* Reads the followed file from kf->off to its end. */
static void read_file(struct agent *a)
{
    struct kfollow *kf = &a->kf;
    if (kf->fd < 0) return;
    for (;;) {
        ssize_t n = pread(kf->fd, kf->buf, KF_BUF, kf->off);
        if (n > 0) {
            remember(kf, kf->buf, (size_t)n, kf->off);
            kf->off += n;
            vg_kmsg_feed(&kf->k, kf->buf, (size_t)n);
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        break;
    }
    settle(kf);
}

void kf_ready(struct agent *a)
{
    struct kfollow *kf = &a->kf;
    if (kf->stream) {
        read_stream(a);
        return;
    }
    /* Drain the notifications (the directory's, so only those naming the
     * file count); what happened is then read from the file itself. */
    char ev[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    bool ours = false;
    ssize_t n;
    while ((n = read(kf->ino, ev, sizeof ev)) > 0)
        for (char *p = ev; p < ev + n;) {
            const struct inotify_event *ie = (const struct inotify_event *)p;
            if (ie->len && !strcmp(ie->name, kf->base)) ours = true;
            if (ie->mask & IN_Q_OVERFLOW) ours = true;
            p += sizeof *ie + ie->len;
        }
    if (!ours) return;
    kf_drain(a);
}

void kf_drain(struct agent *a)
{
    struct kfollow *kf = &a->kf;
    if (kf->stream) {
        read_stream(a);
        return;
    }
    struct stat now, cur;
    bool exists = stat(kf->path, &now) == 0;
    if (kf->fd >= 0 && (!exists || now.st_ino != kf->inode || now.st_dev != kf->dev)) {
        read_file(a);   /* the rest of the old file, then the new one from its start */
        vg_kmsg_finish(&kf->k);
        close(kf->fd);
        kf->fd = -1;
        if (exists) vg_info("agent: %s was replaced; following the new file", kf->path);
    }
    if (kf->fd < 0 && exists) open_file(a, false);
    if (kf->fd >= 0 && fstat(kf->fd, &cur) == 0 && (cur.st_size < kf->off || !same_bytes(kf))) {
        vg_info("agent: %s was %s; reading from its start", kf->path,
                cur.st_size < kf->off ? "truncated" : "truncated and rewritten");
        vg_kmsg_finish(&kf->k);   /* a partial last line of the old content */
        restart_at(kf, 0);
    }
    read_file(a);
}

void kf_close(struct agent *a)
{
    struct kfollow *kf = &a->kf;
    if (kf->fd >= 0) close(kf->fd);
    if (kf->ino >= 0) close(kf->ino);
    free(kf->path);
    free(kf->buf);
}
