/* fuzz_slurm_parse.c — libFuzzer target for the Slurm adapter's parsers of
 * `scontrol show node -o`, `scontrol show job -o` (one job, and every job
 * filtered by node), `scontrol requeue`'s error lines and `sdiag` output. */
#include "orch/slurm.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = 0;
    struct vg_node_state *n;
    size_t k;
    if (vg_slurm_parse_nodes(text, &n, &k) == 0) free(n);
    struct vg_job_state j;
    vg_slurm_parse_job(text, &j);
    struct vg_job_brief *jobs;
    const char *nodes[] = { "n1", "gpu-a100-07" };
    if (vg_slurm_parse_jobs_on(text, nodes, 2, "1,3,12", 1764678663000, &jobs, &k) == 0) free(jobs);
    char why[256];
    vg_slurm_requeue_refused(text, why, sizeof why);
    static struct vg_sdiag d;
    vg_slurm_parse_sdiag(text, &d);
    free(text);
    return 0;
}
