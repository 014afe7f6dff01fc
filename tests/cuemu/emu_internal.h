/*
 * emu_internal.h - what the emulator's parts share (tests/cuemu: a host emulation of the
 * CUDA subset tkbench's plugin uses, so that the plugin's kernels, launches and backend
 * run in CI on machines without a GPU). C++ only; never included by tkbench's sources.
 *
 * The emulated device has one stream (the legacy default stream: every stream argument
 * is 0 in tkbench): a device thread runs queued work in order, so host and device
 * overlap as on a GPU, and the host waits only where CUDA would (synchronous copies,
 * cudaDeviceSynchronize, cudaEventSynchronize, cudaFree).
 */
#ifndef TKB_CUEMU_INTERNAL_H
#define TKB_CUEMU_INTERNAL_H

#include <cuda_runtime.h>

#include <cstdint>
#include <functional>

namespace tkb_emu {

/* What a piece of queued work is, for CUPTI's activity records (emu_cupti.cpp). */
enum act_kind { ACT_NONE, ACT_KERNEL, ACT_MEMCPY, ACT_MEMSET };
struct activity {
  act_kind kind;
  const char *name;   /* kernels: a name that lives as long as the process */
  int copy_kind;      /* memcpy: cudaMemcpyKind (1 HtoD, 2 DtoH, 3 DtoD) */
  uint64_t bytes;
};

/* Queues work on the stream; returns the CUPTI correlation id given to it (0 when CUPTI
 * records nothing). Called on the host thread. */
uint32_t enqueue(const activity &a, std::function<void()> work);
/* Waits until everything queued so far has run; returns the sticky error (cudaSuccess
 * when no kernel failed). */
cudaError_t drain();
/* The emulator's clock in ns (CLOCK_MONOTONIC): events and CUPTI timestamps. */
uint64_t now_ns();
/* A kernel failed on the device (deadlock, a warp intrinsic misused, a bad launch seen
 * on the device thread): the context's sticky error from now on, with a message on
 * stderr that names the kernel, the block and the threads. */
void fail(cudaError_t err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
cudaError_t sticky();

/* Runs a launch's grid on the device thread (emu_device.cpp); smem_limit: the shared
 * memory a block may have (static and dynamic). */
void run_grid(const char *name, const std::function<void()> &body, dim3 grid, dim3 block, size_t smem,
              size_t smem_limit);

/* CUPTI's side (emu_cupti.cpp). cupti_on_api runs on the host thread when an API call
 * queues device work, and returns its correlation id (0 when no activity kind is
 * enabled), recording the pushed external correlation id if any; cupti_on_activity runs
 * on the device thread after the work ran, with its start and end on now_ns's clock. */
uint32_t cupti_on_api(act_kind kind);
void cupti_on_activity(const activity &a, uint32_t correlation, uint64_t start_ns, uint64_t end_ns);

} // namespace tkb_emu

#endif
