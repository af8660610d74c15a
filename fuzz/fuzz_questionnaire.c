/* fuzz_questionnaire.c — libFuzzer target for the line parsers of the
 * security audit and the scorecard: the questionnaire, the --config /
 * --targets file, and slurm.conf / `scontrol show config` text. */
#include "orch/slurm.h"
#include "score/score.h"
#include "security/security.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[512];
    json_decref(vg_questionnaire_parse((const char *)data, size, "fuzz", err, sizeof err));
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = 0;
    struct vg_sec_config c;
    if (vg_sec_config_parse(text, "fuzz", &c, err, sizeof err) == 0) vg_sec_config_free(&c);
    struct vg_slurm_kv *kv;
    size_t n;
    char buf[64];
    if (vg_slurm_parse_config(text, &kv, &n) == 0) {
        vg_slurm_param(vg_slurm_kv_get(kv, n, "AuthInfo"), "cred_expire", buf, sizeof buf);
        vg_slurm_kv_free(kv, n);
    }
    if (vg_slurm_parse_conf_file(text, &kv, &n) == 0) vg_slurm_kv_free(kv, n);
    vg_slurm_param(text, "sched_interval", buf, sizeof buf);
    free(text);
    return 0;
}
