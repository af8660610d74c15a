/* clock.h — the controller's clocks.  Intervals (the breaker's window,
 * deadlines, retries) are measured on the machine's boot-time clock, which
 * never steps; the times written into the store are stamps that follow the
 * wall clock forward but never go back: a wall clock stepped back (a bad NTP
 * source, a hand-set date) is detected, logged and counted, and stamps go on
 * from the boot-time clock, so no duration in the store or the report is
 * negative. */
#ifndef VG_CLOCK_H
#define VG_CLOCK_H
#include <stdint.h>

/* A stamp for the store: ms since the epoch, never earlier than the last one. */
int64_t vg_clock_ms(void);
/* CLOCK_BOOTTIME in ms: counts from the machine's boot, suspend included. */
int64_t vg_clock_boot_ms(void);
/* The machine's boot id ("" when the kernel does not say): boot-time clock
 * readings compare only within one boot. */
const char *vg_clock_boot_id(void);
/* How many wall-clock steps were seen (either way). */
unsigned long vg_clock_steps(void);
/* The wall clock the stamps follow (tests step it); NULL: CLOCK_REALTIME. */
void vg_clock_wall_source(int64_t (*wall)(void));

#endif
