/* rootfs.c — root-relative file access; see rootfs.h. */
#include "util/rootfs.h"
#include "util/strutil.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* A big buffer is faulted in with one call before read() fills it: page by
 * page (a fault per 4 KiB) it costs more than the copy itself on a virtual
 * machine.  Best effort: kernels before 5.14 refuse, and nothing changes. */
static void prefault(char *buf, size_t n)
{
#ifdef MADV_POPULATE_WRITE
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0 || n < (1u << 18)) return;
    uintptr_t a = ((uintptr_t)buf + (uintptr_t)page - 1) & ~((uintptr_t)page - 1), e = ((uintptr_t)buf + n) & ~((uintptr_t)page - 1);
    if (e > a) (void)madvise((void *)a, e - a, MADV_POPULATE_WRITE);
#else
    (void)buf, (void)n;
#endif
}

char *vg_root_path(const char *root, const char *path)
{
    if (!root || !*root || strcmp(root, "/") == 0) return vg_xstrdup(path);
    size_t rl = strlen(root);
    while (rl > 1 && root[rl - 1] == '/') rl--;
    while (*path == '/') path++;
    char *p = vg_xmalloc(rl + strlen(path) + 2);
    memcpy(p, root, rl);
    p[rl] = '/';
    strcpy(p + rl + 1, path);
    return p;
}

int vg_read_file(const char *root, const char *path, size_t max, char **out, size_t *len)
{
    char *full = vg_root_path(root, path);
    int fd = open(full, O_RDONLY | O_CLOEXEC);
    free(full);
    if (fd < 0) return -1;
    /* Reads up to max+1 bytes: one more than allowed means "too big".  A
     * regular file's size is the first guess (one read, no regrowing: the
     * dpkg status file of a large node is megabytes); /proc and /sys files
     * say 0 and grow from 4 KiB. */
    struct stat st;
    size_t hint = !fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size > 0 ? (size_t)st.st_size + 1 : 4096;
    size_t cap = max < hint ? max + 1 : hint, n = 0;
    char *buf = vg_xmalloc(cap + 1);
    prefault(buf, cap + 1);
    for (;;) {
        if (n == cap) {
            if (n > max) {
                free(buf);
                close(fd);
                errno = EFBIG;
                return -1;
            }
            cap = cap * 2 > max + 1 ? max + 1 : cap * 2;
            buf = vg_xrealloc(buf, cap + 1);
        }
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0) {
            if (errno == EINTR) continue;
            int e = errno;
            free(buf);
            close(fd);
            errno = e;
            return -1;
        }
        if (r == 0) break;
        n += (size_t)r;
    }
    if (n > max) {
        free(buf);
        close(fd);
        errno = EFBIG;
        return -1;
    }
    close(fd);
    buf[n] = 0;
    *out = buf;
    if (len) *len = n;
    return 0;
}

int vg_read_line(const char *root, const char *path, char *buf, size_t n)
{
    char *data;
    if (vg_read_file(root, path, 1 << 16, &data, NULL) < 0) return -1;
    char *nl = strchr(data, '\n');
    if (nl) *nl = 0;
    vg_strlcpy(buf, vg_trim(data), n);
    free(data);
    return 0;
}

bool vg_path_exists(const char *root, const char *path)
{
    char *full = vg_root_path(root, path);
    struct stat st;
    bool ok = stat(full, &st) == 0;
    free(full);
    return ok;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int vg_list_dir(const char *root, const char *path, char ***names)
{
    char *full = vg_root_path(root, path);
    DIR *d = opendir(full);
    free(full);
    if (!d) return -1;
    int n = 0, cap = 16;
    char **v = vg_xmalloc(sizeof *v * (size_t)cap);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        if (n == cap) v = vg_xrealloc(v, sizeof *v * (size_t)(cap *= 2));
        v[n++] = vg_xstrdup(e->d_name);
    }
    closedir(d);
    qsort(v, (size_t)n, sizeof *v, cmp_str);
    *names = v;
    return n;
}

void vg_free_list(char **names, int n)
{
    for (int i = 0; i < n; i++) free(names[i]);
    free(names);
}

int vg_read_link(const char *root, const char *path, char *buf, size_t n)
{
    char *full = vg_root_path(root, path);
    ssize_t r = readlink(full, buf, n - 1);
    free(full);
    if (r < 0) return -1;
    buf[r] = 0;
    return 0;
}

int vg_scan_file(const char *root, const char *path, const char *key, size_t max, char *buf, size_t n)
{
    size_t kl = strlen(key);
    if (!kl || n <= kl) {
        errno = EINVAL;
        return -1;
    }
    char *full = vg_root_path(root, path);
    int fd = open(full, O_RDONLY | O_CLOEXEC);
    free(full);
    if (fd < 0) return -1;
    /* Each piece keeps the last n bytes of the one before, so a key (and the
     * text after it) that straddles two reads is still whole in one. */
    enum { PIECE = 1 << 20 };
    char *win = vg_xmalloc(PIECE + n + 1);
    size_t have = 0, total = 0;
    int rc = 0;
    while (total < max) {
        ssize_t r = read(fd, win + have, PIECE);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            rc = -1;
            break;
        }
        have += (size_t)r;
        total += (size_t)r;
        const char *hit = NULL;
        for (const char *p = win; have >= kl && p + kl <= win + have; p++) {
            p = memchr(p, key[0], (size_t)(win + have - p));
            if (!p || p + kl > win + have) break;
            if (!memcmp(p, key, kl)) {
                hit = p;
                break;
            }
        }
        /* A match whose following text is cut by the end of the window waits
         * for the next read, unless the file has ended. */
        if (hit && ((size_t)(win + have - hit) >= n - 1 || r == 0)) {
            size_t l = (size_t)(win + have - hit);
            if (l > n - 1) l = n - 1;
            memcpy(buf, hit, l);
            buf[l] = 0;
            buf[strnlen(buf, l)] = 0;
            rc = 1;
            break;
        }
        if (r == 0) break;
        size_t keep = hit ? (size_t)(win + have - hit) : (have < n ? have : n);
        memmove(win, win + have - keep, keep);
        have = keep;
    }
    int e = errno;
    free(win);
    close(fd);
    errno = e;
    return rc;
}
