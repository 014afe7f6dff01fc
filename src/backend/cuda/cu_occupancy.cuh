/*
 * cu_occupancy.cuh - how many blocks of a kernel fit on the current device at once, the
 * grid of a persistent kernel (fill.cu's tkb_fill_n16, normalization's rowbulk).
 *
 *   tkb_cu_resident_blocks<Kernel>(threads, smem, &blocks)
 *
 * raises the kernel's dynamic shared-memory limit to smem first (a launch above 48 KiB
 * needs it) and memoizes the answer per kernel (the template argument: each kernel has
 * its own limit and occupancy), device and smem, since the attribute and the occupancy
 * query cost host microseconds on every call otherwise, which the wallclock and
 * cuda_events methods see. blocks is 0 when no block fits. `threads` must be the same on
 * every call for a kernel (it is not part of the memo).
 */
#ifndef TKB_CU_OCCUPANCY_CUH
#define TKB_CU_OCCUPANCY_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include <atomic>

template <auto Kernel>
cudaError_t tkb_cu_resident_blocks(int threads, size_t smem, int *blocks) {
  /* the last query: device << 48 | smem << 16 | (blocks per SM + 1); 0: none yet */
  static std::atomic<uint64_t> memo{0};
  int dev = 0, sms = 0, per = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  if (e != cudaSuccess) return e;
  const uint64_t key = (uint64_t)dev << 48 | (uint64_t)smem << 16;
  const uint64_t m = memo.load(std::memory_order_relaxed);
  if (m != 0 && (m & ~(uint64_t)0xffff) == key) {
    per = (int)(m & 0xffff) - 1;
  } else {
    e = cudaFuncSetAttribute(reinterpret_cast<const void *>(Kernel),
                             cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e == cudaSuccess) e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, Kernel, threads, smem);
    if (e != cudaSuccess) return e;
    memo.store(key | (uint64_t)((per + 1) & 0xffff), std::memory_order_relaxed);
  }
  *blocks = per * sms;
  return cudaSuccess;
}

#endif /* TKB_CU_OCCUPANCY_CUH */
