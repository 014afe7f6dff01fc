/*
 * blocking_kernel.h - the boundary between events_timer.c/device.c (C) and blocking_kernel.cu
 * (CUDA C++): nvbench's blocking kernel for cuda_events.
 *
 * Without it, cuda_events' start event fires as soon as the host records it, and the
 * interval to the stop event includes the host's time to launch the call's work (a few
 * us per launch: cudaLaunchKernel, cuBLAS's host code, a host sleep between two
 * launches). With it, one thread spins on a flag in host-mapped memory before the start
 * event, so the start event and all of the call's work queue up behind it; the host
 * raises the flag after recording the stop event, and the events then time the device
 * running the call's queued work back to back.
 *
 * A call that waits for the device inside (a synchronous copy to the host, a
 * cudaDeviceSynchronize, more launches than the launch queue holds) would wait for a
 * flag the host only raises after the call: the kernel gives up after timeout_ns of the
 * GPU's global timer, records that it did, and the call goes on as if unblocked (its
 * events then include launch gaps, as without the kernel).
 */
#ifndef TKB_CU_BLOCKING_KERNEL_H
#define TKB_CU_BLOCKING_KERNEL_H

#include <stdint.h>

/* Words of the host-mapped flag block (cudaHostAllocMapped). Each launch has a
 * generation (1, 2, ...; wrapping): the host releases kernel g by writing g, which also
 * releases any older one still waiting, and a kernel that gives up writes its g, so a
 * late kernel of an earlier call neither misses its release nor is taken for a later
 * call's timeout, and nothing is reset between launches. */
enum { TKB_CU_BLOCK_RELEASE = 0, /* host writes g: kernels of generation <= g return */
       TKB_CU_BLOCK_TIMED_OUT = 1, /* a kernel writes its g when it gave up waiting */
       TKB_CU_BLOCK_WORDS = 2 };

/* Time the kernel waits for the release before giving up: far above the host time of
 * queuing any call's work (tens of us), small beside a benchmark. */
#define TKB_CU_BLOCK_TIMEOUT_NS 50000000ull /* 50 ms */

/* Launches a call may queue behind the kernel: a stream's launch queue holds about a
 * thousand, after which cudaLaunchKernel waits for the device, i.e. for the kernel's
 * timeout. A call known to queue more (ops.c: linear_softmax_cross_entropy_loss's
 * vocabulary chunks at large batch) releases it first. */
#define TKB_CU_BLOCK_MAX_LAUNCHES 256

#ifdef __cplusplus
extern "C" {
#endif
/* Launches one thread on the legacy default stream that returns once
 * flags[TKB_CU_BLOCK_RELEASE] has reached gen (wrapping compare), or after timeout_ns,
 * writing gen to flags[TKB_CU_BLOCK_TIMED_OUT]. flags is the device pointer of the
 * mapped block. Returns the launch's cudaError_t as an int (0: launched). */
int tkb_cu_block_launch(unsigned *flags, uint64_t timeout_ns, unsigned gen);
#ifdef __cplusplus
}
#endif

#endif /* TKB_CU_BLOCKING_KERNEL_H */
