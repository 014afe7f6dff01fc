/*
 * test_cuemu.cu - the CUDA emulator (tests/cuemu) against what CUDA specifies, before it
 * is trusted to run tkbench's kernels: written as CUDA, rewritten by cu2cpp.py like them.
 *  - warp intrinsics: butterfly sums, shuffles up/down/indexed with widths, ballots,
 *    sub-warp masks, lanes that exited before a shuffle that does not read them;
 *  - __syncthreads with static and dynamic shared memory over 2-D blocks, exited threads;
 *  - an mbarrier with bulk copies: data lands at the wait, not before;
 *  - the order threads run in (TKB_EMU_ORDER), which exposes a missing barrier;
 *  - the stream: launches in order with copies, memsets and events, host/device overlap;
 *  - errors: bad launch configurations, shared memory beyond the default without the
 *    attribute, copies outside an allocation, and kernels that misuse CUDA (a deadlock, a
 *    shuffle reading an exited lane, mismatched masks, a mask without the caller), each
 *    in a child process since a failed kernel poisons the context for good.
 */
#include <cuda_runtime.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bulk_copy.cuh"

static int failures;
#define CHECK(c)                                                                                   \
  do {                                                                                             \
    if (!(c)) {                                                                                    \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #c);                        \
      failures++;                                                                                  \
    }                                                                                              \
  } while (0)
#define CHECK_CUDA(e) CHECK((e) == cudaSuccess)

/* ---- kernels ---- */

/* Per warp: the butterfly sum of the lane ids (every lane gets 496), the inclusive scan
 * by shuffles up, a rotation by shuffles down within groups of 8, an indexed read of
 * lane 31 - lane within groups of 16, and the ballot of odd lanes. */
__global__ void warp_ops(int *out) {
  const int lane = threadIdx.x % 32, t = threadIdx.x;
  int s = lane;
  for (int o = 16; o; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
  int scan = lane;
  for (int o = 1; o < 32; o <<= 1) {
    int v = __shfl_up_sync(0xffffffffu, scan, o);
    if (lane >= o) scan += v;
  }
  const int down = __shfl_down_sync(0xffffffffu, lane, 3, 8);
  const int idx = __shfl_sync(0xffffffffu, lane, 31 - lane, 16);
  const unsigned odd = __ballot_sync(0xffffffffu, lane & 1);
  out[5 * t + 0] = s;
  out[5 * t + 1] = scan;
  out[5 * t + 2] = down;
  out[5 * t + 3] = idx;
  out[5 * t + 4] = (int)odd;
}

/* Lanes 8-31 exit; lanes 0-7 sum among themselves with a mask naming only them. */
__global__ void partial_warp(int *out) {
  const int lane = threadIdx.x;
  if (lane >= 8) return;
  int s = lane + 1;
  for (int o = 4; o; o >>= 1) s += __shfl_xor_sync(0xffu, s, o, 8);
  out[lane] = s;
}

/* A 2-D block sums its values through static shared memory; the first row also sums
 * dynamic shared memory the block filled; threads of the last row exit early. */
__global__ void block_sums(const float *in, float *out) {
  __shared__ float part[8][33];
  extern __shared__ __align__(16) unsigned char dyn[];
  float *d = reinterpret_cast<float *>(dyn);
  const int x = threadIdx.x, y = threadIdx.y;
  const int i = blockIdx.x * 256 + y * 32 + x;
  d[y * 32 + x] = 2.0f * in[i];
  part[y][x] = in[i];
  __syncthreads();
  if (y == 7) return;
  if (y == 0) {
    float s = 0.0f, t = 0.0f;
    for (int r = 0; r < 8; r++) s += part[r][x];
    for (int r = 0; r < 8; r++) t += d[r * 32 + x];
    part[0][32] = 0.0f; /* touches the padding column: inside the array */
    out[blockIdx.x * 64 + x] = s;
    out[blockIdx.x * 64 + 32 + x] = t;
  }
  __syncthreads(); /* the exited row counts as arrived */
}

/* Thread 0 copies 256 floats into shared memory in two phases; every thread reads one
 * value before and after waiting. */
__global__ void bulk(const float *in, float *before, float *after) {
  __shared__ __align__(16) float buf[256];
  __shared__ uint64_t bar;
  const int t = threadIdx.x;
  if (t == 0) tkb_bulk_init(&bar, 1);
  buf[t] = -1.0f;
  __syncthreads();
  for (int phase = 0; phase < 2; phase++) {
    if (t == 0) {
      tkb_bulk_fence();
      tkb_bulk_expect(&bar, 1024);
      tkb_bulk_load(buf, in + phase * 256, 1024, &bar);
    }
    before[phase * 256 + t] = buf[t];
    tkb_bulk_wait(&bar, (unsigned)phase);
    after[phase * 256 + t] = buf[t];
    __syncthreads();
  }
}

__global__ void write_value(int *p, int v) { p[threadIdx.x] = v; }

/* A race: thread 63 reads what thread 0 writes, with no barrier between. In index
 * order thread 0 runs first and the read sees 7; last to first (TKB_EMU_ORDER=reverse)
 * it sees shared memory's initial 0xff bytes. */
__global__ void missing_barrier(int *out) {
  __shared__ int v;
  if (threadIdx.x == 0) v = 7;
  if (threadIdx.x == 63) out[0] = v;
}

/* Misuse: half a warp at __syncthreads, the other half at a shuffle naming the whole
 * warp: neither can complete. */
__global__ void deadlock(int *out) {
  if (threadIdx.x < 16) __syncthreads();
  else out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, (int)threadIdx.x, 1);
}
/* Misuse: lanes 0-15 read lanes 16-31, which exited. */
__global__ void read_exited(int *out) {
  if (threadIdx.x >= 16) return;
  out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, (int)threadIdx.x, 16);
}
/* Misuse: lane 0 and lane 1 name each other with different masks. */
__global__ void mask_mismatch(int *out) {
  if (threadIdx.x == 0) __syncwarp(0x3u);
  else if (threadIdx.x == 1) __syncwarp(0x7u);
  out[threadIdx.x] = 1;
}
/* Misuse: a mask without the caller's own lane. */
__global__ void mask_without_self(int *out) { out[threadIdx.x] = __shfl_sync(0x2u, 5, 1); }

/* ---- host ---- */

typedef void (*misuse_fn)(int *);

/* Runs a misusing kernel in a child: the launch itself succeeds, the kernel fails on the
 * device, every later call reports cudaErrorLaunchFailure. Child exit codes: 0 as
 * expected, 1 the kernel ran clean, 2 the error was not sticky. */
static int run_misuse(misuse_fn k, const char *what) {
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid == 0) {
    int *d = NULL;
    if (cudaMalloc((void **)&d, 64 * sizeof(int)) != cudaSuccess) _exit(3);
    k<<<1, 32>>>(d);
    /* the launch itself is valid; the kernel may already have failed on the device
     * thread by now, as a GPU's asynchronous error may show at any later call */
    const cudaError_t launched = cudaGetLastError();
    if (launched != cudaSuccess && launched != cudaErrorLaunchFailure) _exit(4);
    if (cudaDeviceSynchronize() != cudaErrorLaunchFailure) _exit(1);
    void *p = NULL;
    if (cudaMalloc(&p, 16) != cudaErrorLaunchFailure || cudaGetLastError() != cudaErrorLaunchFailure) _exit(2);
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
  printf("misuse %-18s -> child exit %d%s\n", what, code, code ? " (expected 0)" : "");
  return code;
}

static void test_misuse(void) {
  CHECK(run_misuse(deadlock, "deadlock") == 0);
  CHECK(run_misuse(read_exited, "read_exited") == 0);
  CHECK(run_misuse(mask_mismatch, "mask_mismatch") == 0);
  CHECK(run_misuse(mask_without_self, "mask_without_self") == 0);
}

static void test_warps(void) {
  int *d = NULL, h[5 * 64];
  CHECK_CUDA(cudaMalloc((void **)&d, sizeof h));
  warp_ops<<<1, 64>>>(d);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int t = 0; t < 64; t++) {
    const int lane = t % 32;
    const int down = (lane % 8) + 3 < 8 ? lane + 3 : lane;
    const int idx = (lane & ~15) + ((31 - lane) & 15);
    bad += h[5 * t] != 496 || h[5 * t + 1] != lane * (lane + 1) / 2 || h[5 * t + 2] != down ||
           h[5 * t + 3] != idx || (unsigned)h[5 * t + 4] != 0xaaaaaaaau;
  }
  CHECK(bad == 0);
  partial_warp<<<1, 32>>>(d);
  CHECK_CUDA(cudaMemcpy(h, d, 8 * sizeof(int), cudaMemcpyDeviceToHost));
  for (int l = 0; l < 8; l++) CHECK(h[l] == 36);
  CHECK_CUDA(cudaFree(d));
}

static void test_blocks(void) {
  const int blocks = 3;
  float hin[3 * 256], hout[3 * 64];
  for (int i = 0; i < blocks * 256; i++) hin[i] = (float)(i % 37) - 3.0f;
  float *in = NULL, *out = NULL;
  CHECK_CUDA(cudaMalloc((void **)&in, sizeof hin));
  CHECK_CUDA(cudaMalloc((void **)&out, sizeof hout));
  CHECK_CUDA(cudaMemcpy(in, hin, sizeof hin, cudaMemcpyHostToDevice));
  block_sums<<<blocks, dim3(32, 8), 1024>>>(in, out);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaMemcpy(hout, out, sizeof hout, cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int b = 0; b < blocks; b++)
    for (int x = 0; x < 32; x++) {
      float s = 0.0f;
      for (int r = 0; r < 8; r++) s += hin[b * 256 + r * 32 + x];
      bad += hout[b * 64 + x] != s || hout[b * 64 + 32 + x] != 2.0f * s;
    }
  CHECK(bad == 0);
  /* dynamic shared memory past 48 KiB needs the attribute */
  block_sums<<<1, dim3(32, 8), 64 << 10>>>(in, out);
  CHECK(cudaGetLastError() == cudaErrorInvalidValue);
  CHECK_CUDA(cudaFuncSetAttribute(block_sums, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 << 10));
  block_sums<<<1, dim3(32, 8), 64 << 10>>>(in, out);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());
  /* configurations CUDA refuses */
  block_sums<<<1, 2048, 0>>>(in, out);
  CHECK(cudaGetLastError() == cudaErrorInvalidConfiguration);
  block_sums<<<dim3(1, 70000), 32, 0>>>(in, out);
  CHECK(cudaGetLastError() == cudaErrorInvalidConfiguration);
  CHECK(cudaGetLastError() == cudaSuccess); /* read once */
  CHECK_CUDA(cudaFree(in));
  CHECK_CUDA(cudaFree(out));
}

static void test_bulk(void) {
  float hin[512], hb[512], ha[512];
  for (int i = 0; i < 512; i++) hin[i] = (float)i;
  float *in = NULL, *before = NULL, *after = NULL;
  CHECK_CUDA(cudaMalloc((void **)&in, sizeof hin));
  CHECK_CUDA(cudaMalloc((void **)&before, sizeof hb));
  CHECK_CUDA(cudaMalloc((void **)&after, sizeof ha));
  CHECK_CUDA(cudaMemcpy(in, hin, sizeof hin, cudaMemcpyHostToDevice));
  bulk<<<1, 256>>>(in, before, after);
  CHECK_CUDA(cudaMemcpy(hb, before, sizeof hb, cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(ha, after, sizeof ha, cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < 512; i++) bad += ha[i] != hin[i] || hb[i] != (i < 256 ? -1.0f : (float)(i - 256));
  CHECK(bad == 0);
  CHECK_CUDA(cudaFree(in));
  CHECK_CUDA(cudaFree(before));
  CHECK_CUDA(cudaFree(after));
}

static void test_order(void) {
  const char *o = getenv("TKB_EMU_ORDER");
  const bool rev = o && strcmp(o, "reverse") == 0;
  int *d = NULL, h = 0;
  CHECK_CUDA(cudaMalloc((void **)&d, sizeof h));
  missing_barrier<<<1, 64>>>(d);
  CHECK_CUDA(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
  printf("missing barrier, threads %s: read %d\n", rev ? "last to first" : "in order", h);
  CHECK(h == (rev ? -1 : 7));
  CHECK_CUDA(cudaFree(d));
}

static void test_stream(void) {
  int *d = NULL, h[64];
  CHECK_CUDA(cudaMalloc((void **)&d, sizeof h));
  /* fresh device memory is 0xff bytes */
  CHECK_CUDA(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
  CHECK(h[0] == -1 && h[63] == -1);
  cudaEvent_t a, b;
  CHECK_CUDA(cudaEventCreate(&a));
  CHECK_CUDA(cudaEventCreate(&b));
  float ms = 0.0f;
  CHECK(cudaEventElapsedTime(&ms, a, b) == cudaErrorInvalidResourceHandle); /* never recorded */
  CHECK_CUDA(cudaEventRecord(a, 0));
  CHECK_CUDA(cudaMemsetAsync(d, 0, sizeof h, 0));
  write_value<<<1, 32>>>(d, 7);
  CHECK_CUDA(cudaEventRecord(b, 0));
  CHECK_CUDA(cudaEventSynchronize(b));
  CHECK_CUDA(cudaEventQuery(b));
  CHECK_CUDA(cudaEventElapsedTime(&ms, a, b));
  CHECK(ms >= 0.0f && ms < 1000.0f);
  CHECK_CUDA(cudaMemcpyAsync(h, d, sizeof h, cudaMemcpyDeviceToHost, 0));
  CHECK_CUDA(cudaStreamSynchronize(0));
  CHECK(h[0] == 7 && h[31] == 7 && h[32] == 0 && h[63] == 0);
  /* copies and memsets stay inside allocations */
  CHECK(cudaMemcpy(h, d + 1, sizeof h, cudaMemcpyDeviceToHost) == cudaErrorInvalidValue);
  CHECK(cudaMemsetAsync(d + 60, 0, 32, 0) == cudaErrorInvalidValue);
  CHECK(cudaFree(h) == cudaErrorInvalidValue);
  CHECK(cudaGetLastError() == cudaErrorInvalidValue);
  size_t free_b = 0, total_b = 0;
  CHECK_CUDA(cudaMemGetInfo(&free_b, &total_b));
  CHECK(free_b < total_b);
  CHECK(tkb_emu_kernels_launched() > 0);
  CHECK_CUDA(cudaEventDestroy(a));
  CHECK_CUDA(cudaEventDestroy(b));
  CHECK_CUDA(cudaFree(d));
}

int main(void) {
  test_misuse(); /* first: forks before this process starts its device thread */
  test_warps();
  test_blocks();
  test_bulk();
  test_order();
  test_stream();
  CHECK_CUDA(cudaDeviceSynchronize());
  printf("%s: %d failures\n", failures ? "FAILED" : "passed", failures);
  return failures ? 1 : 0;
}
