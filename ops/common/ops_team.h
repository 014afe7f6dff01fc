/*
 * ops_team.h - a team of helper threads for an op whose parallel work is OpenBLAS calls
 * on its own tiles plus the elementwise work around them (internal).
 *
 * Why not OpenMP: an op called between OpenBLAS's own multithreaded products (a
 * benchmark's baseline, the op's other products) shares the cores with OpenBLAS's
 * thread pool, whose workers spin (yielding) for about 0.1 s after each product.
 * libgomp's workers spin too after each parallel region, without yielding (hundreds of
 * thousands of pause instructions), so each pool's idle workers held the cores the
 * other's needed: gated_linear_unit in OpenMP tiles ran 2-5x slower than on one thread.
 * This team's helpers sleep (a condition variable) the moment a job has no items left,
 * and the caller never waits for a helper that has not woken: it takes the items
 * itself, and returns when every item is done. A helper that wakes late finds the job
 * gone and sleeps again.
 */
#ifndef TKB_OPS_TEAM_H
#define TKB_OPS_TEAM_H

#include <stdatomic.h>
#include <stdint.h>

/* One item of a job: `thread` is 0 for the calling thread and 1..threads-1 for the
 * helpers, so that an item can use that thread's scratch memory. */
typedef void (*ops_team_fn)(void *ctx, int64_t item, int thread);

/* Runs fn(ctx, i, thread) for every i < n (any order, each once) on the calling thread
 * and up to threads - 1 helpers (at most OPS_TEAM_MAX in all), and returns when all
 * are done. Items are claimed one at a time in increasing order, so an item may wait
 * for an earlier one (see ops_team_wait). Called while another call runs (another
 * thread's, or from inside an item), it runs every item on the calling thread. */
#define OPS_TEAM_MAX 64
void ops_team_run(int threads, int64_t n, ops_team_fn fn, void *ctx);

/* Waits until *counter (which items increment) reaches target: spins briefly, then
 * yields the core. For an item that needs earlier items' results. */
void ops_team_wait(_Atomic int64_t *counter, int64_t target);

#endif /* TKB_OPS_TEAM_H */
