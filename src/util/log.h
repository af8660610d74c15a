/* log.h — messages on stderr, one line each, prefixed "vigil: ".
 * vg_input_error() is the contract for bad input: one line naming the file,
 * line or field at fault; callers then exit 2. */
#ifndef VG_LOG_H
#define VG_LOG_H
#include <stdarg.h>

enum { VG_EXIT_OK = 0, VG_EXIT_FINDINGS = 1, VG_EXIT_INPUT = 2 };

void vg_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void vg_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* What a user needs to see without -v (where a daemon listens, a URL to open);
 * silenced by -q. */
void vg_notice(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void vg_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void vg_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
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
