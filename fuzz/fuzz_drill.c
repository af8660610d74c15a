/* fuzz_drill.c — libFuzzer target for the drill's parsers: the injection
 * record file (JSON lines), a trainer checkpoint, and the job-log follower
 * fed the same bytes line by line. */
#include "drill/drill.h"
#include "drill/inject.h"
#include "drill/trainer.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[256];
    json_t *l = vg_inject_parse_records((const char *)data, size, err, sizeof err);
    json_decref(l);
    long step;
    vg_ckpt_parse((const char *)data, size, &step);
    static struct vg_joblog log;
    static int ready;
    if (!ready) ready = vg_joblog_init(&log, "", "step ([0-9]+)", "resumed from step ([0-9]+)", err, sizeof err) == 0;
    if (!ready) return 0;
    log.mark = 1700000000000LL;
    char *copy = malloc(size + 1);
    if (!copy) return 0;
    memcpy(copy, data, size);
    copy[size] = 0;
    for (char *save = NULL, *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
        vg_joblog_line(&log, line, 1700000000500LL);
    free(copy);
    return 0;
}
