/* trainer.c — checkpoint files of `vigil trainer` (see trainer.h):
 * DIR/ckpt-0000000012 holds "vigil-trainer checkpoint\nstep=12\nend\n". */
#include "drill/trainer.h"
#include "util/rootfs.h"
#include "util/sbuf.h"
#include "util/strutil.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CKPT_HEADER "vigil-trainer checkpoint\n"
#define CKPT_PREFIX "ckpt-"

bool vg_ckpt_parse(const char *text, size_t len, long *step)
{
    size_t hl = strlen(CKPT_HEADER);
    if (len < hl || memcmp(text, CKPT_HEADER, hl) || len > 256) return false;
    char buf[257];
    memcpy(buf, text + hl, len - hl);
    buf[len - hl] = 0;
    char *nl = strchr(buf, '\n');
    if (!vg_startswith(buf, "step=") || !nl || strcmp(nl + 1, "end\n")) return false;
    *nl = 0;
    long s;
    if (!vg_parse_long(buf + 5, &s) || s < 0) return false;
    *step = s;
    return true;
}

static int fsync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}

/* Removes all but the newest VG_CKPT_KEEP checkpoints (names sort by step). */
static void prune(const char *dir)
{
    char **names;
    int n = vg_list_dir(NULL, dir, &names);
    int kept = 0;
    for (int i = n - 1; i >= 0; i--) {
        if (!vg_startswith(names[i], CKPT_PREFIX)) continue;
        if (++kept <= VG_CKPT_KEEP) continue;
        struct sbuf p = SBUF_INIT;
        sbuf_printf(&p, "%s/%s", dir, names[i]);
        unlink(p.s);
        sbuf_free(&p);
    }
    if (n > 0) vg_free_list(names, n);
}

int vg_ckpt_write(const char *dir, long step)
{
    if (step < 0) return errno = EINVAL, -1;
    struct sbuf tmp = SBUF_INIT, dst = SBUF_INIT, body = SBUF_INIT;
    sbuf_printf(&tmp, "%s/.%s%010ld.tmp", dir, CKPT_PREFIX, step);
    sbuf_printf(&dst, "%s/%s%010ld", dir, CKPT_PREFIX, step);
    sbuf_printf(&body, CKPT_HEADER "step=%ld\nend\n", step);
    int rc = -1, fd = open(tmp.s, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0) {
        rc = write(fd, body.s, body.len) == (ssize_t)body.len && fsync(fd) == 0 ? 0 : -1;
        if (close(fd)) rc = -1;
        if (!rc) rc = rename(tmp.s, dst.s);
        if (!rc) rc = fsync_dir(dir);
        else unlink(tmp.s);
    }
    if (!rc) prune(dir);
    sbuf_free(&tmp), sbuf_free(&dst), sbuf_free(&body);
    return rc;
}

long vg_ckpt_latest(const char *dir)
{
    char **names;
    int n = vg_list_dir(NULL, dir, &names);
    if (n < 0) return -1;
    long best = 0;
    for (int i = n - 1; i >= 0 && !best; i--) {
        if (!vg_startswith(names[i], CKPT_PREFIX)) continue;
        struct sbuf p = SBUF_INIT;
        sbuf_printf(&p, "%s/%s", dir, names[i]);
        char *text;
        size_t len;
        long step, named;
        if (vg_read_file(NULL, p.s, 4096, &text, &len) == 0) {
            /* the name and the content must agree */
            if (vg_ckpt_parse(text, len, &step) && vg_parse_long(names[i] + strlen(CKPT_PREFIX), &named) &&
                named == step)
                best = step;
            free(text);
        }
        sbuf_free(&p);
    }
    vg_free_list(names, n);
    return best;
}

int vg_progress_write(const char *dir, long restart, long rank, long step)
{
    struct sbuf tmp = SBUF_INIT, dst = SBUF_INIT;
    sbuf_printf(&tmp, "%s/.progress-%ld-%ld.tmp", dir, restart, rank);
    sbuf_printf(&dst, "%s/.progress-%ld-%ld", dir, restart, rank);
    char body[32];
    int len = snprintf(body, sizeof body, "%ld\n", step);
    int rc = -1, fd = open(tmp.s, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0) {
        rc = write(fd, body, (size_t)len) == len ? 0 : -1;
        if (close(fd)) rc = -1;
        if (!rc) rc = rename(tmp.s, dst.s);
    }
    sbuf_free(&tmp), sbuf_free(&dst);
    return rc;
}

bool vg_progress_reached(const char *dir, long restart, long ntasks, long step, long *from)
{
    for (; *from < ntasks; (*from)++) {
        char path[64], line[32];
        snprintf(path, sizeof path, "/.progress-%ld-%ld", restart, *from);
        long done;
        if (vg_read_line(dir, path, line, sizeof line) || !vg_parse_long(line, &done) || done < step) return false;
    }
    return true;
}
