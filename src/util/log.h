/* log.h — messages on stderr, one line each, prefixed "vigil: ".
 * vg_input_error() is the contract for bad input: one line naming the file,
 * line or field at fault; callers then exit 2. */
#ifndef VG_LOG_H
#define VG_LOG_H
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>

enum { VG_EXIT_OK = 0, VG_EXIT_FINDINGS = 1, VG_EXIT_INPUT = 2 };

void vg_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void vg_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* What a user needs to see without -v (where a daemon listens, a URL to open);
 * silenced by -q. */
void vg_notice(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void vg_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void vg_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A rate limit on one class of lines (say, rejected requests): at most
 * `burst` lines per `every_ms`; the lines past it are only counted, and one
 * line says how many ("suppressed N 'what' lines in the last S s") when the
 * window ends — at the next line of the class or at vg_lograte_tick, which a
 * long-running thread calls now and then.  Thread-safe. */
struct vg_lograte {
    const char *what;
    int64_t every_ms;
    unsigned burst;
    pthread_mutex_t lock;
    int64_t start;              /* vg_mono_ms() the window began; 0: none yet */
    unsigned used;              /* lines let through in this window */
    unsigned long suppressed;   /* lines counted, not printed, in this window */
};
#define VG_LOGRATE(what, every_ms, burst) { (what), (every_ms), (burst), PTHREAD_MUTEX_INITIALIZER, 0, 0, 0 }
void vg_warn_limited(struct vg_lograte *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void vg_err_limited(struct vg_lograte *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints the "suppressed" line of a window that has ended. */
void vg_lograte_tick(struct vg_lograte *r);
/* Prints the message and returns VG_EXIT_INPUT, so `return vg_input_error(...)`. */
int vg_input_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* 0 = errors only, 1 = warnings (default), 2 = info, 3 = debug. */
/* A progress line on stdout led by the RFC 3339 UTC time, flushed (the lines
 * `vigil trainer` and `vigil launch` print and the drill reads). */
void vg_stamped(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Every later vg_stamped line is also written to fd (opened O_APPEND), one
 * write per line; -1 stops it. */
void vg_stamped_copy(int fd);
void vg_log_level(int level);
int vg_log_get_level(void);

#endif
