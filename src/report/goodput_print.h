/* goodput_print.h — the goodput of trainer jobs (drill/goodput.h's summary)
 * as a terminal table (goodput_print.c). */
#ifndef VG_GOODPUT_PRINT_H
#define VG_GOODPUT_PRINT_H
#include <jansson.h>
#include <stdio.h>

/* The totals line, a row per job, and a line per restart under its job. */
void vg_goodput_print(FILE *f, const json_t *goodput);

#endif
