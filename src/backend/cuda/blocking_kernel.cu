/*
 * blocking_kernel.cu - the kernel that holds the stream for cuda_events until the host
 * has queued a call's work (blocking_kernel.h says why and when it gives up).
 */
#include "blocking_kernel.h"

#include <cuda_runtime.h>

namespace {

/* Nanoseconds of the GPU's global timer: a clock that, unlike clock64(), does not
 * follow the SM clock, so the timeout is time whatever the clocks do. */
__device__ __forceinline__ uint64_t global_ns() {
#ifdef TKB_CU_EMU /* tests/cuemu: the emulator's clock */
  return tkb_emu::device_clock();
#else
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
#endif
}

/* Released: the host has written gen or a later generation (wrapping). */
__device__ __forceinline__ bool released(volatile unsigned *flags, unsigned gen) {
  return (int)(flags[TKB_CU_BLOCK_RELEASE] - gen) >= 0;
}

/* flags live in host memory: every volatile load crosses the bus and sees the host's
 * latest store (PTX: a volatile load is a relaxed load at system scope). The sleep
 * keeps the polling to about one read per microsecond. */
__global__ void tkb_block_stream(volatile unsigned *flags, uint64_t timeout_ns, unsigned gen) {
  const uint64_t t0 = global_ns();
  while (!released(flags, gen)) {
    /* signed: a timer that stepped back is no timeout */
    if ((int64_t)(global_ns() - t0) > (int64_t)timeout_ns) {
      /* a release between the flag's read above and the clock's is no timeout either */
      if (!released(flags, gen)) flags[TKB_CU_BLOCK_TIMED_OUT] = gen;
      return;
    }
#if __CUDA_ARCH__ >= 700 || defined(TKB_CU_EMU)
    __nanosleep(1000);
#endif
  }
}

} // namespace

extern "C" int tkb_cu_block_launch(unsigned *flags, uint64_t timeout_ns, unsigned gen) {
  (void)cudaGetLastError(); /* a stale error is not this launch's (fill.cu does the same) */
  tkb_block_stream<<<1, 1, 0, 0>>>(flags, timeout_ns, gen);
  return (int)cudaGetLastError();
}
