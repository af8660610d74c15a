/* storeguard.c — one writer per store, and the store file watched; see
 * storeguard.h. */
#include "controller/storeguard.h"
#include "controller/clock.h"
#include "util/condwait.h"
#include "util/log.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define WATCH_MS 500

struct ident {
    bool known;
    dev_t dev;
    ino_t ino;
};

struct vg_storeguard {
    char db[1024], wal[1100], lockpath[1100];
    bool file;   /* a SQLite file (a PostgreSQL store has no file, no lock: the election decides who acts) */
    int lockfd;
    struct ident file_id, log, lockfile;
    pthread_mutex_t lock;
    bool lost;                 /* read without the lock through vg_storeguard_lost: set once, after why */
    char why[320];
    pthread_t watcher;
    bool watching, stopping;
    pthread_cond_t wake;
};

static bool ident_of(const char *path, struct ident *id)
{
    struct stat st;
    if (stat(path, &st)) return false;
    id->known = true;
    id->dev = st.st_dev;
    id->ino = st.st_ino;
    return true;
}

/* Marks the store lost (once): the ALERT line names the file and why. */
static void lose(struct vg_storeguard *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void lose(struct vg_storeguard *g, const char *fmt, ...)
{
    pthread_mutex_lock(&g->lock);
    if (!g->lost) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(g->why, sizeof g->why, fmt, ap);
        va_end(ap);
        __atomic_store_n(&g->lost, true, __ATOMIC_RELEASE);
        vg_err("ALERT store %s: %s; no message is acknowledged until the controller is restarted with a sound "
               "store (agents keep theirs and send again)", g->db, g->why);
    }
    pthread_mutex_unlock(&g->lock);
}

struct vg_storeguard *vg_storeguard_lock(const char *db, char *err, size_t errlen)
{
    struct vg_storeguard *g = vg_xcalloc(1, sizeof *g);
    vg_strlcpy(g->db, db, sizeof g->db);
    pthread_mutex_init(&g->lock, NULL);
    pthread_cond_init(&g->wake, NULL);
    g->lockfd = -1;
    if (strcmp(vg_store_engine(db), "sqlite")) return g;
    g->file = true;
    snprintf(g->wal, sizeof g->wal, "%s-wal", db);
    snprintf(g->lockpath, sizeof g->lockpath, "%s.lock", db);
    g->lockfd = open(g->lockpath, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (g->lockfd < 0) {
        snprintf(err, errlen, "--db %s: cannot open its lock file %s: %s", db, g->lockpath, strerror(errno));
        vg_storeguard_close(g);
        return NULL;
    }
    if (flock(g->lockfd, LOCK_EX | LOCK_NB)) {
        char holder[256] = "";
        ssize_t n = pread(g->lockfd, holder, sizeof holder - 1, 0);
        holder[n > 0 ? n : 0] = 0;
        holder[strcspn(holder, "\n")] = 0;
        snprintf(err, errlen, "--db %s: another controller holds this store (%s); one store has one writer: stop it, "
                              "or give this one a store of its own",
                 db, holder[0] ? holder : "its lock file says nothing more");
        vg_storeguard_close(g);
        return NULL;
    }
    char host[128] = "?", since[32], line[320];
    gethostname(host, sizeof host - 1);
    vg_format_time(vg_now_ms(), since);
    int len = snprintf(line, sizeof line, "pid %ld on %s, since %s\n", (long)getpid(), host, since);
    if (ftruncate(g->lockfd, 0) || pwrite(g->lockfd, line, (size_t)len, 0) != len)
        vg_warn("serve: cannot write who holds the lock into %s: %s", g->lockpath, strerror(errno));
    ident_of(g->lockpath, &g->lockfile);
    return g;
}

int vg_storeguard_verify(struct vg_storeguard *g, bool fresh, char *err, size_t errlen)
{
    char why[256];
    if (!g->file) return 0;
    int v = vg_store_verify(g->db, why, sizeof why);
    if (v < 0) vg_warn("serve: --db %s: cannot check it before opening: %s", g->db, why);
    if (v <= 0) return 0;
    if (!fresh) {
        snprintf(err, errlen, "--db %s: the store is corrupt (%s); start with --new-store to move it aside and "
                              "begin a new one", g->db, why);
        return -1;
    }
    char stamp[32], aside[1200], from[1100];
    vg_format_time(vg_now_ms(), stamp);
    static const char *const sides[] = { "", "-wal", "-shm" };
    for (size_t i = 0; i < 3; i++) {
        snprintf(from, sizeof from, "%s%s", g->db, sides[i]);
        snprintf(aside, sizeof aside, "%s.corrupt-%s%s", g->db, stamp, sides[i]);
        if (rename(from, aside) && errno != ENOENT) {
            snprintf(err, errlen, "--new-store: cannot move %s aside: %s", from, strerror(errno));
            return -1;
        }
    }
    vg_warn("serve: --db %s was corrupt (%s): moved aside to %s.corrupt-%s; starting a new store", g->db, why, g->db,
            stamp);
    return 0;
}

static void on_corrupt(void *ctx, const char *why)
{
    lose(ctx, "the database finds it corrupt: %s", why);
}

const char *vg_storeguard_lost(struct vg_storeguard *g)
{
    return g && __atomic_load_n(&g->lost, __ATOMIC_ACQUIRE) ? g->why : NULL;
}

const char *vg_storeguard_check(struct vg_storeguard *g)
{
    if (!g) return NULL;
    if (vg_storeguard_lost(g) || !g->file) return vg_storeguard_lost(g);
    char why[256] = "";
    struct ident now = { 0 };
    pthread_mutex_lock(&g->lock);   /* the watcher and the committer both check */
    if (!ident_of(g->db, &now)) snprintf(why, sizeof why, "the file was deleted under the controller");
    else if (now.dev != g->file_id.dev || now.ino != g->file_id.ino)
        snprintf(why, sizeof why, "the file was replaced under the controller");
    else if (!ident_of(g->lockpath, &now) || now.dev != g->lockfile.dev || now.ino != g->lockfile.ino)
        snprintf(why, sizeof why, "its lock file %.200s was deleted or replaced", g->lockpath);
    else if (ident_of(g->wal, &now)) {
        if (!g->log.known) g->log = now;   /* SQLite makes it at the first write */
        else if (now.dev != g->log.dev || now.ino != g->log.ino)
            snprintf(why, sizeof why, "its write-ahead log was replaced under the controller");
    } else if (g->log.known)
        snprintf(why, sizeof why, "its write-ahead log was deleted under the controller");
    pthread_mutex_unlock(&g->lock);
    if (why[0]) lose(g, "%s", why);
    return vg_storeguard_lost(g);
}

static void *watch_main(void *arg)
{
    struct vg_storeguard *g = arg;
    pthread_mutex_lock(&g->lock);
    while (!g->stopping) {
        pthread_mutex_unlock(&g->lock);
        vg_storeguard_check(g);
        vg_clock_ms();   /* a wall-clock step is noticed even when nothing happens */
        pthread_mutex_lock(&g->lock);
        if (!g->stopping) vg_cond_wait_ms(&g->wake, &g->lock, WATCH_MS);
    }
    pthread_mutex_unlock(&g->lock);
    return NULL;
}

void vg_storeguard_watch(struct vg_storeguard *g, struct vg_store *const *conns, size_t n)
{
    if (g->file && !ident_of(g->db, &g->file_id)) lose(g, "the file is gone (%s)", strerror(errno));
    if (g->file) ident_of(g->wal, &g->log);
    for (size_t i = 0; i < n; i++)
        if (conns[i]) vg_store_watch_corrupt(conns[i], on_corrupt, g);
    pthread_cond_destroy(&g->wake);
    vg_cond_init_mono(&g->wake);
    g->watching = pthread_create(&g->watcher, NULL, watch_main, g) == 0;
}

void vg_storeguard_metrics(struct vg_storeguard *g, struct sbuf *out)
{
    sbuf_printf(out,
                "# HELP vigil_store_ok 1 while the incident store is the file the controller opened and sound; 0 once "
                "it was deleted, replaced or found corrupt (nothing is acknowledged then).\n"
                "# TYPE vigil_store_ok gauge\nvigil_store_ok %d\n"
                "# HELP vigil_clock_steps_total Steps of the wall clock seen (either way).\n"
                "# TYPE vigil_clock_steps_total counter\nvigil_clock_steps_total %lu\n",
                vg_storeguard_lost(g) ? 0 : 1, vg_clock_steps());
}

void vg_storeguard_close(struct vg_storeguard *g)
{
    if (!g) return;
    if (g->watching) {
        pthread_mutex_lock(&g->lock);
        g->stopping = true;
        pthread_cond_signal(&g->wake);
        pthread_mutex_unlock(&g->lock);
        pthread_join(g->watcher, NULL);
    }
    pthread_cond_destroy(&g->wake);
    pthread_mutex_destroy(&g->lock);
    if (g->lockfd >= 0) close(g->lockfd);   /* releases the lock */
    free(g);
}
