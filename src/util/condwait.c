/* condwait.c — timed waits on the monotonic clock (see condwait.h). */
#include "util/condwait.h"
#include <time.h>

void vg_cond_init_mono(pthread_cond_t *c)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(c, &ca);
    pthread_condattr_destroy(&ca);
}

int vg_cond_wait_ms(pthread_cond_t *c, pthread_mutex_t *m, int64_t ms)
{
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    if (ms < 0) ms = 0;
    until.tv_sec += (time_t)(ms / 1000);
    until.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
    return pthread_cond_timedwait(c, m, &until);
}
