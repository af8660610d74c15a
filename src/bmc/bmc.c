/* bmc.c — what both BMC protocols share: the operations' names and the
 * credentials file (`user:password`, readable by its owner only). */
#include "bmc/bmc.h"
#include "util/strutil.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const names[] = { [VG_BMC_CYCLE] = "power-cycle", [VG_BMC_ON] = "power-on",
                                     [VG_BMC_OFF] = "power-off", [VG_BMC_STATUS] = "status" };

const char *vg_bmc_op_name(enum vg_bmc_op op) { return names[op]; }

int vg_bmc_op_parse(const char *s, enum vg_bmc_op *op)
{
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(s, names[i])) return *op = (enum vg_bmc_op)i, 0;
    return -1;
}

int vg_bmc_read_user_file(const char *path, struct vg_bmc_conf *c, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    struct stat st;
    if (fd < 0 || fstat(fd, &st)) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode) || (st.st_mode & 077)) {
        close(fd);
        return snprintf(err, errlen, "%s: mode %04o: a credentials file must be readable by its owner only "
                        "(chmod 600)", path, (unsigned)(st.st_mode & 07777)), -1;
    }
    char buf[512];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    buf[n > 0 ? n : 0] = 0;
    buf[strcspn(buf, "\r\n")] = 0;
    char *colon = strchr(buf, ':');
    int rc = 0;
    if (!colon || colon == buf || !colon[1])
        rc = (snprintf(err, errlen, "%s: line 1: not 'user:password'", path), -1);
    else if ((size_t)(colon - buf) >= sizeof c->user || strlen(colon + 1) >= sizeof c->password)
        rc = (snprintf(err, errlen, "%s: line 1: user or password too long", path), -1);
    else {
        *colon = 0;
        vg_strlcpy(c->user, buf, sizeof c->user);
        vg_strlcpy(c->password, colon + 1, sizeof c->password);
    }
    memset(buf, 0, sizeof buf);
    return rc;
}
