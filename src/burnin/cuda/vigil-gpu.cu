/* vigil-gpu.cu — vigil's own GPU tests, for nodes where DCGM and nccl-tests
 * are not installed (`make cuda` builds build/vigil-gpu; not part of the
 * default build, it needs nvcc).  Prints one line per measurement, the
 * format src/burnin/parse_gpubench.c reads:
 *
 *   vigil-gpu gemm [--n N] [--iters K]
 *     gemm gpu=0 n=N iters=K ms=T tflops=F mismatches=M
 *   vigil-gpu copy [--bytes B]
 *     copy gpu=0 dir=h2d bytes=B ms=T gbps=G   (and dir=d2h)
 *   on a CUDA error:  error gpu=0 msg="cudaMalloc: out of memory"
 *
 * GEMM with checksums (silent data corruption): A and B hold small integers
 * (-2..2) as floats, so every element of C = A·B is an integer below 2^24
 * and exact in FP32 whatever the summation order.  Each of the K products
 * must be bit-identical to the first, and 256 elements of the first are
 * checked against the CPU; every differing element counts as a mismatch.
 * The kernel is a plain shared-memory tiled SGEMM, not a tuned one: burn-in
 * compares GPUs of one node against each other (gemm-ratio), not against a
 * vendor peak.  Copies use pinned host memory and cudaMemcpy, as
 * nvbandwidth's copy-engine tests do.
 *
 * Not validated on a GPU: the machines this was written on have none.  It
 * compiles with nvcc; tests use the stand-in tests/standins/vigil-gpu. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TILE 16

__global__ void sgemm(const float *a, const float *b, float *c, int n)
{
    __shared__ float as[TILE][TILE], bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    float sum = 0;
    for (int t = 0; t < n; t += TILE) {
        as[threadIdx.y][threadIdx.x] = row < n && t + threadIdx.x < n ? a[row * n + t + threadIdx.x] : 0;
        bs[threadIdx.y][threadIdx.x] = col < n && t + threadIdx.y < n ? b[(t + threadIdx.y) * n + col] : 0;
        __syncthreads();
        for (int k = 0; k < TILE; k++) sum += as[threadIdx.y][k] * bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < n && col < n) c[row * n + col] = sum;
}

/* Adds to *count the elements where x and y differ (bitwise). */
__global__ void differ(const float *x, const float *y, size_t n, unsigned long long *count)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n && __float_as_uint(x[i]) != __float_as_uint(y[i])) atomicAdd(count, 1ULL);
}

static int gpu;
#define CK(call)                                                                                        \
    do {                                                                                                \
        cudaError_t e_ = (call);                                                                        \
        if (e_ != cudaSuccess) {                                                                        \
            printf("error gpu=%d msg=\"%s: %s\"\n", gpu, #call, cudaGetErrorString(e_));               \
            return -1;                                                                                  \
        }                                                                                               \
    } while (0)

static int gemm(int n, int iters)
{
    size_t elems = (size_t)n * n, bytes = elems * sizeof(float);
    float *ha = (float *)malloc(bytes), *hb = (float *)malloc(bytes), *hc = (float *)malloc(bytes);
    if (!ha || !hb || !hc) {
        printf("error gpu=%d msg=\"host memory\"\n", gpu);
        return -1;
    }
    unsigned s = 12345;
    for (size_t i = 0; i < elems; i++) {
        s = s * 1103515245u + 12345u;
        ha[i] = (float)((int)(s >> 16) % 5 - 2);
        s = s * 1103515245u + 12345u;
        hb[i] = (float)((int)(s >> 16) % 5 - 2);
    }
    float *a, *b, *ref, *c;
    unsigned long long *dcount, mismatches = 0;
    CK(cudaMalloc(&a, bytes));
    CK(cudaMalloc(&b, bytes));
    CK(cudaMalloc(&ref, bytes));
    CK(cudaMalloc(&c, bytes));
    CK(cudaMalloc(&dcount, sizeof *dcount));
    CK(cudaMemset(dcount, 0, sizeof *dcount));
    CK(cudaMemcpy(a, ha, bytes, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(b, hb, bytes, cudaMemcpyHostToDevice));
    dim3 block(TILE, TILE), grid((n + TILE - 1) / TILE, (n + TILE - 1) / TILE);
    sgemm<<<grid, block>>>(a, b, ref, n);
    CK(cudaGetLastError());
    CK(cudaMemcpy(hc, ref, bytes, cudaMemcpyDeviceToHost));
    for (int k = 0; k < 256; k++) {   /* the reference itself, against the CPU */
        size_t i = ((size_t)k * 2654435761u) % elems, r = i / n, col = i % n;
        double sum = 0;
        for (int j = 0; j < n; j++) sum += (double)ha[r * n + j] * hb[(size_t)j * n + col];
        if ((float)sum != hc[i]) mismatches++;
    }
    cudaEvent_t t0, t1;
    CK(cudaEventCreate(&t0));
    CK(cudaEventCreate(&t1));
    CK(cudaEventRecord(t0));
    for (int it = 0; it < iters; it++) {
        sgemm<<<grid, block>>>(a, b, c, n);
        differ<<<(unsigned)((elems + 255) / 256), 256>>>(ref, c, elems, dcount);
    }
    CK(cudaEventRecord(t1));
    CK(cudaEventSynchronize(t1));
    CK(cudaGetLastError());
    float ms;
    CK(cudaEventElapsedTime(&ms, t0, t1));
    unsigned long long d;
    CK(cudaMemcpy(&d, dcount, sizeof d, cudaMemcpyDeviceToHost));
    mismatches += d;
    printf("gemm gpu=%d n=%d iters=%d ms=%.1f tflops=%.4g mismatches=%llu\n", gpu, n, iters, ms,
           2.0 * n * n * (double)n * iters / (ms / 1e3) / 1e12, mismatches);
    cudaFree(a), cudaFree(b), cudaFree(ref), cudaFree(c), cudaFree(dcount);
    free(ha), free(hb), free(hc);
    return 0;
}

static int copy(size_t bytes)
{
    const int reps = 10;
    void *host, *dev;
    CK(cudaMallocHost(&host, bytes));
    CK(cudaMalloc(&dev, bytes));
    memset(host, 0x5a, bytes);
    cudaEvent_t t0, t1;
    CK(cudaEventCreate(&t0));
    CK(cudaEventCreate(&t1));
    for (int dir = 0; dir < 2; dir++) {
        cudaMemcpyKind kind = dir ? cudaMemcpyDeviceToHost : cudaMemcpyHostToDevice;
        CK(cudaMemcpy(dir ? host : dev, dir ? dev : host, bytes, kind));   /* warm-up */
        CK(cudaEventRecord(t0));
        for (int r = 0; r < reps; r++) CK(cudaMemcpyAsync(dir ? host : dev, dir ? dev : host, bytes, kind));
        CK(cudaEventRecord(t1));
        CK(cudaEventSynchronize(t1));
        float ms;
        CK(cudaEventElapsedTime(&ms, t0, t1));
        printf("copy gpu=%d dir=%s bytes=%zu ms=%.3f gbps=%.2f\n", gpu, dir ? "d2h" : "h2d", bytes, ms / reps,
               (double)bytes * reps / (ms / 1e3) / 1e9);
    }
    cudaFreeHost(host);
    cudaFree(dev);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2 || (strcmp(argv[1], "gemm") && strcmp(argv[1], "copy"))) {
        fprintf(stderr, "usage: vigil-gpu gemm [--n N] [--iters K] | copy [--bytes B]\n");
        return 2;
    }
    long n = 4096, iters = 10, bytes = 256L << 20;
    for (int i = 2; i + 1 < argc; i += 2) {
        long v = strtol(argv[i + 1], NULL, 10);
        if (!strcmp(argv[i], "--n") && v >= TILE && v <= 32768) n = v;
        else if (!strcmp(argv[i], "--iters") && v > 0) iters = v;
        else if (!strcmp(argv[i], "--bytes") && v > 0) bytes = v;
        else {
            fprintf(stderr, "vigil-gpu: bad option %s %s\n", argv[i], argv[i + 1]);
            return 2;
        }
    }
    int count = 0, rc = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        printf("error gpu=-1 msg=\"cudaGetDeviceCount: %s\"\n", e != cudaSuccess ? cudaGetErrorString(e) : "no GPU");
        return 1;
    }
    for (gpu = 0; gpu < count; gpu++) {
        if (cudaSetDevice(gpu) != cudaSuccess) {
            printf("error gpu=%d msg=\"cudaSetDevice failed\"\n", gpu);
            rc = 1;
            continue;
        }
        if ((!strcmp(argv[1], "gemm") ? gemm((int)n, (int)iters) : copy((size_t)bytes)) < 0) rc = 1;
    }
    return rc;
}
