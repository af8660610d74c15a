/* clock.c — stamps that never go back and the boot-time clock; see clock.h. */
#include "controller/clock.h"
#include "util/log.h"
#include "util/strutil.h"
#include "util/timeutil.h"
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define STEP_MS 1000   /* the wall clock off the stamps by more than this: a step */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int64_t (*wall_source)(void) = vg_now_ms;
static bool anchored;
static int64_t anchor_wall, anchor_boot;   /* the stamp at boot-time anchor_boot was anchor_wall */
static int64_t behind;                     /* how far behind the stamps the wall clock was last reported */
static unsigned long steps;
static pthread_once_t boot_once = PTHREAD_ONCE_INIT;
static char boot_id[64];

int64_t vg_clock_boot_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_BOOTTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void read_boot_id(void)
{
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (!f) return;
    if (!fgets(boot_id, sizeof boot_id, f)) boot_id[0] = 0;
    fclose(f);
    boot_id[strcspn(boot_id, "\n")] = 0;
}

const char *vg_clock_boot_id(void)
{
    pthread_once(&boot_once, read_boot_id);
    return boot_id;
}

int64_t vg_clock_ms(void)
{
    int64_t wall = wall_source(), boot = vg_clock_boot_ms();
    pthread_mutex_lock(&lock);
    if (!anchored) anchor_wall = wall, anchor_boot = boot, anchored = true;
    int64_t stamp = anchor_wall + (boot - anchor_boot), off = wall - stamp;
    if (off > STEP_MS) {
        /* forward: the stamps follow (a slow clock set right, a resume) */
        steps++;
        vg_warn("clock: the wall clock stepped forward by %.1f s; stamps follow it", (double)off / 1000.0);
        anchor_wall = stamp = wall;
        anchor_boot = boot;
        behind = 0;
    } else if (off < -STEP_MS) {
        /* back: the stamps go on from the boot-time clock; said once per step */
        if (-off - behind > STEP_MS) {
            steps++;
            vg_warn("clock: the wall clock stepped back by %.1f s; stamps go on from the boot-time clock "
                    "(%.1f s ahead of the wall clock) so no recorded duration is negative",
                    (double)(-off - behind) / 1000.0, (double)-off / 1000.0);
        }
        behind = -off;
    } else {
        behind = 0;
    }
    pthread_mutex_unlock(&lock);
    return stamp;
}

unsigned long vg_clock_steps(void)
{
    pthread_mutex_lock(&lock);
    unsigned long n = steps;
    pthread_mutex_unlock(&lock);
    return n;
}

void vg_clock_wall_source(int64_t (*wall)(void))
{
    pthread_mutex_lock(&lock);
    wall_source = wall ? wall : vg_now_ms;
    anchored = false;
    behind = 0;
    pthread_mutex_unlock(&lock);
}
