/* resetgpu.c — `vigil reset-gpu --gpu N [--vendor NAME]`: resets one GPU
 * through its vendor's library (AMD SMI, ROCm SMI) under a deadline, for a
 * repair ladder's reset rung (`repair reset = vigil reset-gpu --gpu {gpu}`);
 * see docs/gpu.md. */
#include "cmd/cmd.h"
#include "signal/gpuprobe.h"
#include "util/jsonutil.h"
#include "util/log.h"
#include "util/strutil.h"
#include <getopt.h>
#include <stdio.h>

#define USAGE                                                                                        \
    "usage: vigil reset-gpu --gpu N [--vendor NAME] [--timeout SECS] [--json]\n"                   \
    "Resets GPU N (the vendor's own index) through its vendor's library, under a deadline (default\n" \
    "60 s): AMD SMI's or ROCm SMI's GPU reset.  NVML has none (use nvidia-smi -r).  --vendor names\n" \
    "the vendor (amd, nvidia) where GPUs of more than one are here.  On an XGMI hive a reset is not\n" \
    "contained to the one GPU.  Exit 0 reset, 1 refused, failed or no answer, 2 bad options.\n"

int cmd_reset_gpu(int argc, char **argv)
{
    static const struct option opts[] = {
        { "gpu", required_argument, 0, 'g' }, { "vendor", required_argument, 0, 'v' },
        { "timeout", required_argument, 0, 't' }, { "json", no_argument, 0, 'j' },
        { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 },
    };
    long gpu = -1, timeout = 60;
    const char *vendor = NULL;
    bool json = false;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'g':
            if (!vg_parse_long(optarg, &gpu) || gpu < 0 || gpu > 63)
                return vg_input_error("reset-gpu: --gpu: '%s' is not a GPU index 0..63", optarg);
            break;
        case 'v':
            if (!vg_gpu_vendor_find(NULL, optarg)) return vg_input_error("reset-gpu: --vendor: '%s' is not amd or nvidia", optarg);
            vendor = optarg;
            break;
        case 't':
            if (!vg_parse_long(optarg, &timeout) || timeout < 1 || timeout > 3600)
                return vg_input_error("reset-gpu: --timeout: '%s' is not 1..3600 seconds", optarg);
            break;
        case 'j': json = true; break;
        case 'h': fputs(USAGE, stdout); return 0;
        default: fputs(USAGE, stderr); return VG_EXIT_INPUT;
        }
    }
    if (optind < argc) return vg_input_error("reset-gpu: unexpected argument '%s'", argv[optind]);
    if (gpu < 0) return vg_input_error("reset-gpu: --gpu N is required\n%s", USAGE);
    char err[300];
    int rc = vg_gpu_reset(NULL, vendor, (int)gpu, (int)timeout * 1000, err, sizeof err);
    if (json) vg_json_print(stdout, json_pack("{s:i,s:b,s:s?}", "gpu", (int)gpu, "reset", rc == 0, "error", rc ? err : NULL), 0);
    else if (!rc) printf("GPU %ld reset\n", gpu);
    if (rc) vg_err("reset-gpu: GPU %ld: %s", gpu, err);
    return rc ? VG_EXIT_FINDINGS : 0;
}
