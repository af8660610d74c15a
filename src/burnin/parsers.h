/* parsers.h — readers of the burn-in tools' real output formats: DCGM's
 * `dcgmi diag` (its JSON, 3.x and 4.x, and its table), nccl-tests' table
 * (all_reduce_perf and the other collectives, current and legacy layouts,
 * srun/mpirun line prefixes; rccl-tests print the same), perftest's
 * bandwidth table (ib_write_bw and friends, Gb/sec, MB/sec or MiB/sec),
 * vigil's own GPU test (vigil-gpu), and AMD's tools: the ROCm Validation
 * Suite (rvs) and TransferBench.
 * Each returns 0 when the text is that tool's output (even a failing run),
 * -1 when it is not (err says why); none trusts the tool's exit code alone. */
#ifndef VG_BURNIN_PARSERS_H
#define VG_BURNIN_PARSERS_H
#include <stdbool.h>
#include <stddef.h>

#define VG_NCCL_ROWS 64
struct vg_nccl_result {
    int rows;              /* size rows in the table */
    struct { long long bytes; double oop, ip; } row[VG_NCCL_ROWS];   /* each row's size and busbw (the
                                                                         * largest sizes when there are more) */
    int nrow;
    double avg_busbw;      /* "# Avg bus bandwidth" (GB/s), or the mean of the rows' busbw */
    bool has_avg;          /* the footer line was there */
    double max_busbw;      /* the largest busbw of any row (out-of-place or in-place) */
    long oob;              /* "# Out of bounds values : N"; -1 when absent */
    long wrong;            /* sum of the #wrong cells (N/A counts 0) */
    char error[200];       /* "Test NCCL failure …" / "Test CUDA failure …" / "Test failure …", or "" */
};
int vg_parse_nccl(const char *text, size_t len, struct vg_nccl_result *r, char *err, size_t errlen);
/* The index of the row of message size bytes, else of the largest row below it; -1 none. */
int vg_nccl_row_at(const struct vg_nccl_result *r, long long bytes);

struct vg_perftest_result {
    int rows;              /* size rows */
    char unit[16];         /* "Gb/sec", "MB/sec", "MiB/sec" as the header prints it */
    long bytes;            /* the last (largest) row's message size */
    double bw_peak, bw_avg;/* that row's figures, in unit */
    double avg_gbps;       /* bw_avg in Gb/s (1e9 bits) */
    char error[200];       /* "Completion with error at client" …, or "" */
};
int vg_parse_perftest(const char *text, size_t len, struct vg_perftest_result *r, char *err, size_t errlen);

struct vg_dcgm_result {
    bool json;             /* read from `-j` output */
    char version[32];      /* DCGM version from the metadata, or "" */
    int tests;             /* tests read (a test row and its per-GPU rows are one test) */
    int passed, failed, skipped;   /* tests by outcome: failed on any GPU, else passed on one, else skipped */
    int hw_tests, hw_ran;  /* tests outside the Deployment section, and those of them that ran */
    char skipped_names[160];   /* the hardware tests skipped: "memory, diagnostic, pcie", or "" */
    char first_fail[240];  /* "Targeted Power: Fail - GPU: 1: GPU 1 Max power …", or "" */
};
int vg_parse_dcgm(const char *text, size_t len, struct vg_dcgm_result *r, char *err, size_t errlen);

/* vigil-gpu (src/burnin/cuda/): one line per measurement,
 *   gemm gpu=0 n=4096 iters=20 ms=812.5 tflops=3.38 mismatches=0
 *   copy gpu=0 dir=h2d bytes=268435456 ms=5.1 gbps=52.6
 *   error gpu=0 msg="…"   (gpu=-1: no device or driver for the CUDA runtime) */
#define VG_GPUBENCH_MAX 64
struct vg_gpubench_result {
    int ngemm, ncopy;
    struct { int gpu; double tflops; long mismatches; } gemm[VG_GPUBENCH_MAX];
    struct { int gpu; char dir[8]; double gbps; } copy[VG_GPUBENCH_MAX];
    char error[200];
    int error_gpu;         /* the GPU of the first error line; -1: CUDA itself did not start */
};
int vg_parse_gpubench(const char *text, size_t len, struct vg_gpubench_result *r, char *err, size_t errlen);

/* The ROCm Validation Suite (parse_rvs.c): every verdict its modules print. */
struct vg_rvs_result {
    char module[16];       /* "gst", "iet", … ("Module name :"), "" when none was printed */
    int actions;           /* "Action name :" lines */
    int verdicts, failed;  /* verdicts read (met:, pass:, peqt, violations, peers:, a bandwidth,
                            * mem Test N : PASS, Number of errors, a summary row) and those that failed */
    char first_fail[240];  /* the first failed verdict, without its log prefix */
    double min_gbps;       /* the lowest bandwidth (pebb, pbqt GBps; mem Test 11 GB/s), -1 when none */
    int summary_rows;      /* action rows of the "(RVS) Summary" table */
    int errors;            /* "RVS-ERROR …" and "[ERROR ] …" lines */
    char error[200];       /* the first of them */
    char version[24];      /* "RVS version" in the summary, "" when absent */
};
int vg_parse_rvs(const char *text, size_t len, struct vg_rvs_result *r, char *err, size_t errlen);

/* TransferBench (parse_transferbench.c): its a2a and p2p presets. */
#define VG_TB_PAIRS 4      /* CPU->CPU, CPU->GPU, GPU->CPU, GPU->GPU */
#define VG_TB_GPU_GPU 3
struct vg_tb_result {
    char version[16];      /* "1.60.00" from the banner, "" when not printed */
    bool has_a2a;          /* "Average   bandwidth (GPU Timed)" was read */
    double a2a_avg;        /* its GB/s, -1 none */
    double a2a_min;        /* the slowest GPU-to-GPU pair of the summary matrix, -1 none */
    int a2a_min_src, a2a_min_dst;
    bool has_uni, has_bi;  /* the p2p "Averages (During UniDir|BiDir)" lines were read */
    double uni[VG_TB_PAIRS], bi[VG_TB_PAIRS];   /* their averages by pair, GB/s; -1 for N/A */
    int errors, mismatches;/* "[ERROR] …" lines, of them "Unexpected mismatch" (wrong data) */
    char error[200];       /* the first [ERROR] line */
};
int vg_parse_transferbench(const char *text, size_t len, struct vg_tb_result *r, char *err, size_t errlen);
const char *vg_tb_pair_name(int i);   /* "GPU->GPU" */

#endif
