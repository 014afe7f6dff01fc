/*
 * bulk_copy.cuh - Hopper's bulk asynchronous copies (the TMA's one-dimensional form) from
 * global into shared memory, completed through an mbarrier; for the ops' kernels that
 * stream a tensor through shared memory with several copies in flight per block and no
 * registers held by them.
 *
 * Protocol (one producer thread per block, all threads consume):
 *   tkb_bulk_init(bar, 1) by the producer, then __syncthreads();
 *   producer: tkb_bulk_expect(bar, bytes); tkb_bulk_load(dst, src, bytes, bar);
 *   consumers: tkb_bulk_wait(bar, phase) with phase = 0, 1, 0, ... for the barrier's
 *     successive loads; the data is then visible to every thread that waited.
 *   Refilling a buffer that threads have read: __syncthreads(), then the producer calls
 *     tkb_bulk_fence() (orders the generic-proxy reads before the async-proxy writes)
 *     and issues the next load.
 * bytes: a multiple of 16, src and dst 16-byte aligned, < 2^20 per barrier phase.
 *
 * The instructions exist from sm_90 on. Compiled for an older architecture these bodies
 * are empty: the host must launch a kernel that uses them only when
 * tkb_bulk_compiled(kernel) says its binary is sm_90 or newer.
 */
#ifndef TKB_CU_BULK_COPY_CUH
#define TKB_CU_BULK_COPY_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define TKB_BULK_ASM 1
#endif

__device__ __forceinline__ uint32_t tkb_smem_addr(const void *p) {
  return (uint32_t)__cvta_generic_to_shared(p);
}

/* Arrival count `count`; makes the initialization visible to the async proxy. */
__device__ __forceinline__ void tkb_bulk_init(uint64_t *bar, uint32_t count) {
#ifdef TKB_BULK_ASM
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(tkb_smem_addr(bar)), "r"(count)
               : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#elif defined(TKB_CU_EMU) /* tests/cuemu: the emulator's mbarriers and bulk copies */
  tkb_emu::mbar_init(bar, count);
#else
  (void)bar;
  (void)count;
#endif
}

/* The producer's arrival, announcing `bytes` to come from bulk loads on this phase. */
__device__ __forceinline__ void tkb_bulk_expect(uint64_t *bar, uint32_t bytes) {
#ifdef TKB_BULK_ASM
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(tkb_smem_addr(bar)),
               "r"(bytes)
               : "memory");
#elif defined(TKB_CU_EMU)
  tkb_emu::mbar_arrive_tx(bar, bytes);
#else
  (void)bar;
  (void)bytes;
#endif
}

/* Copy `bytes` from global src to shared dst; completion is counted on bar. */
__device__ __forceinline__ void tkb_bulk_load(void *dst, const void *src, uint32_t bytes, uint64_t *bar) {
#ifdef TKB_BULK_ASM
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
          tkb_smem_addr(dst)),
      "l"(src), "r"(bytes), "r"(tkb_smem_addr(bar))
      : "memory");
#elif defined(TKB_CU_EMU)
  tkb_emu::bulk_load(dst, src, bytes, bar);
#else
  (void)dst;
  (void)src;
  (void)bytes;
  (void)bar;
#endif
}

/* Order this thread's earlier shared-memory accesses (and, after a __syncthreads, the
 * block's) before later bulk copies into the same memory. */
__device__ __forceinline__ void tkb_bulk_fence() {
#ifdef TKB_BULK_ASM
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
}

/* Block until phase `phase` (0 or 1) of bar has completed. */
__device__ __forceinline__ void tkb_bulk_wait(uint64_t *bar, uint32_t phase) {
#ifdef TKB_BULK_ASM
  uint32_t done = 0;
  do {
    asm volatile(
        "{\n\t.reg .pred p;\n\t"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
        "selp.u32 %0, 1, 0, p;\n\t}"
        : "=r"(done)
        : "r"(tkb_smem_addr(bar)), "r"(phase)
        : "memory");
  } while (!done);
#elif defined(TKB_CU_EMU)
  tkb_emu::mbar_wait(bar, phase);
#else
  (void)bar;
  (void)phase;
#endif
}

/* Whether `kernel`'s loaded binary was compiled for sm_90 or newer (so the bodies above
 * are the real instructions). Host side; false when the query fails. */
template <typename K>
static inline bool tkb_bulk_compiled(K *kernel) {
  cudaFuncAttributes fa;
  if (cudaFuncGetAttributes(&fa, reinterpret_cast<const void *>(kernel)) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return fa.binaryVersion >= 90;
}

#endif /* TKB_CU_BULK_COPY_CUH */
