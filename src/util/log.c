/* log.c — stderr logging with a level, and rate-limited classes of lines; see log.h. */
#include "util/log.h"
#include "util/timeutil.h"
#include "util/strutil.h"
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int level = 1;

void vg_log_level(int l) { level = l; }
int vg_log_get_level(void) { return level; }

static void emit(const char *tag, bool scrub, const char *fmt, va_list ap)
{
    char line[2048];
    vsnprintf(line, sizeof line, fmt, ap);
    /* Log lines may carry what a client sent: a CR or LF must not forge a line.
     * (Usage errors keep their newlines: they come from vigil's own text.) */
    if (scrub) vg_scrub_controls(line);
    fprintf(stderr, "vigil: %s%s\n", tag, line);
}

#define VG_LOG_FN(name, min, tag)                 \
    void name(const char *fmt, ...)              \
    {                                            \
        if (level < (min)) return;               \
        va_list ap;                              \
        va_start(ap, fmt);                       \
        emit(tag, true, fmt, ap);                      \
        va_end(ap);                              \
    }

VG_LOG_FN(vg_err, 0, "")
VG_LOG_FN(vg_warn, 1, "warning: ")
VG_LOG_FN(vg_notice, 1, "")
VG_LOG_FN(vg_info, 2, "")
VG_LOG_FN(vg_debug, 3, "debug: ")

/* Under r->lock: ends the window when it is over, printing its count. */
static void window_roll(struct vg_lograte *r, int64_t now)
{
    if (r->start && now - r->start < r->every_ms) return;
    if (r->suppressed && level >= 1)
        fprintf(stderr, "vigil: warning: suppressed %lu '%s' lines in the last %lld s\n", r->suppressed, r->what,
                (long long)((now - r->start + 999) / 1000));
    r->start = now;
    r->used = 0;
    r->suppressed = 0;
}

static void limited(struct vg_lograte *r, int min, const char *tag, const char *fmt, va_list ap)
{
    if (level < min) return;
    pthread_mutex_lock(&r->lock);
    window_roll(r, vg_mono_ms());
    bool print = r->used < r->burst;
    if (print) {
        r->used++;
        emit(tag, true, fmt, ap);
    } else {
        r->suppressed++;
    }
    pthread_mutex_unlock(&r->lock);
}

void vg_warn_limited(struct vg_lograte *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    limited(r, 1, "warning: ", fmt, ap);
    va_end(ap);
}

void vg_err_limited(struct vg_lograte *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    limited(r, 0, "", fmt, ap);
    va_end(ap);
}

void vg_lograte_tick(struct vg_lograte *r)
{
    pthread_mutex_lock(&r->lock);
    if (r->suppressed) window_roll(r, vg_mono_ms());
    pthread_mutex_unlock(&r->lock);
}

int vg_input_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit("", false, fmt, ap);
    va_end(ap);
    return VG_EXIT_INPUT;
}

static int stamped_copy = -1;

void vg_stamped_copy(int fd) { stamped_copy = fd; }

void vg_stamped(const char *fmt, ...)
{
    char line[1024];
    vg_format_time(vg_now_ms(), line);
    size_t n = strlen(line);
    line[n++] = ' ';
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(line + n, sizeof line - n - 1, fmt, ap);
    va_end(ap);
    n = k < 0 ? n : n + (size_t)k < sizeof line - 1 ? n + (size_t)k : sizeof line - 2;
    line[n++] = '\n';
    fwrite(line, 1, n, stdout);
    fflush(stdout);
    /* one write(2) per line: appenders of one file never split each other's lines */
    if (stamped_copy >= 0 && write(stamped_copy, line, n) < 0) stamped_copy = -1;
}
