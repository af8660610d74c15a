/* store_file.c — a SQLite store's file before the controller locks and
 * opens it: the directory it goes in, made when missing, and the file
 * readable by its owner only (it holds what every node reported).  See
 * store_file.h. */
#include "controller/store_file.h"
#include "util/log.h"
#include "util/strutil.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The store's directory: every missing one down to it created (0700), as
 * `mkdir -p`; otherwise one line naming it and the flag. */
static int state_dir(const char *db, char *err, size_t errlen)
{
    char dir[1024];
    vg_strlcpy(dir, db, sizeof dir);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir) return 0;
    *slash = 0;
    struct stat st;
    if (!stat(dir, &st)) {
        if (S_ISDIR(st.st_mode)) return 0;
        snprintf(err, errlen, "serve: --db %s: %s is not a directory", db, dir);
        return -1;
    }
    /* each directory of the path in turn; those already there are left as they are */
    for (char *p = dir + 1;; p++) {
        if (*p && *p != '/') continue;
        char c = *p;
        *p = 0;
        int rc = mkdir(dir, 0700);
        if (rc && errno != EEXIST) {   /* dir ends at the one that cannot be made */
            snprintf(err, errlen, "serve: --db %s: cannot create %s (%s): create it, or give --db a file in a writable "
                                  "directory", db, dir, strerror(errno));
            return -1;
        }
        if (!rc) vg_info("serve: created %s (0700) for the incident store", dir);
        if (!(*p = c)) return 0;
    }
}

/* A new store is created 0600 (SQLite gives its WAL and shared-memory files
 * the same mode); one readable by others is made so, and said. */
static int private_store(const char *db, char *err, size_t errlen)
{
    int fd = open(db, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd >= 0) return close(fd), 0;
    if (errno != EEXIST) {
        snprintf(err, errlen, "serve: --db %s: %s", db, strerror(errno));
        return -1;
    }
    static const char *const suffix[] = { "", "-wal", "-shm" };
    for (size_t i = 0; i < sizeof suffix / sizeof *suffix; i++) {
        char path[4200];
        struct stat st;
        snprintf(path, sizeof path, "%s%s", db, suffix[i]);
        if (stat(path, &st) || !(st.st_mode & 077)) continue;
        if (chmod(path, 0600)) {
            snprintf(err, errlen, "serve: --db %s: %s is readable by others and cannot be made 0600: %s", db, path,
                     strerror(errno));
            return -1;
        }
        vg_warn("serve: %s was readable by others (mode %03o): made 0600, as the store holds every node's reports",
                path, (unsigned)(st.st_mode & 0777));
    }
    return 0;
}

int vg_store_file_prepare(const char *db, char *err, size_t errlen)
{
    return state_dir(db, err, errlen) || private_store(db, err, errlen) ? -1 : 0;
}
