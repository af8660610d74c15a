/* condwait.h — condition variables that wait on the monotonic clock, so a
 * step of the wall clock (NTP, an administrator's date) neither stretches a
 * thread's sleep to the size of the step nor wakes it early. */
#ifndef VG_CONDWAIT_H
#define VG_CONDWAIT_H
#include <pthread.h>
#include <stdint.h>

/* pthread_cond_init with CLOCK_MONOTONIC. */
void vg_cond_init_mono(pthread_cond_t *c);
/* Under m: waits on c (made by vg_cond_init_mono) at most ms milliseconds;
 * 0 when signalled, ETIMEDOUT when the time passed. */
int vg_cond_wait_ms(pthread_cond_t *c, pthread_mutex_t *m, int64_t ms);

#endif
