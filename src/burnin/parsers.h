/* parsers.h — readers of the burn-in tools' real output formats: DCGM's
 * `dcgmi diag` (its JSON, 3.x and 4.x, and its table), nccl-tests' table
 * (all_reduce_perf and the other collectives, current and legacy layouts,
 * srun/mpirun line prefixes), perftest's bandwidth table (ib_write_bw and
 * friends, Gb/sec, MB/sec or MiB/sec) and vigil's own GPU test (vigil-gpu).
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

#endif
