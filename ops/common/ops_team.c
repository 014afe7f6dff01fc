/*
 * ops_team.c - the helper team of ops_team.h: helpers created on first use, never
 * joined (they sleep between jobs), one job at a time.
 *
 * A job is published under `lock` with a new generation number; items are claimed from
 * `claim`, which holds (generation << 32 | next item), by compare-and-swap, so a helper
 * still holding an old job's description can never claim an item of a newer job. The
 * caller waits on the count of finished items only: a helper that is slow to wake (its
 * core busy elsewhere) costs nothing but the items it did not take.
 */
#define _GNU_SOURCE /* sched_getcpu, CPU_SET: a helper that wakes on its caller's core */
#include "ops_team.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>

static pthread_mutex_t run_lock = PTHREAD_MUTEX_INITIALIZER; /* one job at a time */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;     /* the job's description */
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static int started;                        /* helpers created (under lock) */
static uint32_t first_gen[OPS_TEAM_MAX];   /* generation each helper starts after */
static uint32_t gen;                       /* the job's generation (under lock) */
static ops_team_fn job_fn;                 /* the job (under lock) */
static void *job_ctx;
static int64_t job_n;
static int job_threads;
static int job_cpu;                        /* the core the caller was on (-1: unknown) */
static _Atomic uint64_t claim;             /* gen << 32 | next unclaimed item */
static _Atomic int64_t done;               /* items of the job finished */

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

void ops_team_wait(_Atomic int64_t *counter, int64_t target) {
  /* the other threads' items take microseconds: spin that long, then give the core to
   * whoever needs it (a thread of ours that was descheduled, or another process) */
  for (int spin = 0; atomic_load_explicit(counter, memory_order_acquire) < target; spin++)
    if (spin < 2000) cpu_relax();
    else sched_yield();
}

/* Claims and runs items of job g until none is left (or a newer job has replaced it). */
static void work(uint32_t g, ops_team_fn fn, void *ctx, int64_t n, int thread) {
  uint64_t cur = atomic_load_explicit(&claim, memory_order_acquire);
  for (;;) {
    if ((uint32_t)(cur >> 32) != g || (int64_t)(cur & 0xffffffffu) >= n) return;
    if (!atomic_compare_exchange_weak_explicit(&claim, &cur, cur + 1, memory_order_acq_rel,
                                               memory_order_acquire))
      continue;
    fn(ctx, (int64_t)(cur & 0xffffffffu), thread);
    atomic_fetch_add_explicit(&done, 1, memory_order_release);
    cur = atomic_load_explicit(&claim, memory_order_acquire);
  }
}

/* Moves the calling helper off core `cpu` (the caller's), onto any other core of
 * `allowed` (the helper's mask at its start). The scheduler wakes a helper on its
 * caller's core when the other cores look busy (an OpenBLAS worker spinning there,
 * another process), and the two then took turns on one core for whole benchmark
 * specs: the tiles of gated_linear_unit at one thread's speed (45 % of sgemm against
 * 85-90 % in the same run's other specs). */
static void leave_cpu(int cpu, const cpu_set_t *allowed) {
  cpu_set_t set = *allowed;
  if (cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &set) || CPU_COUNT(&set) < 2) return;
  CPU_CLR(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static void *helper(void *arg) {
  const int me = (int)(intptr_t)arg;
  cpu_set_t allowed;
  const bool can_move = pthread_getaffinity_np(pthread_self(), sizeof allowed, &allowed) == 0;
  bool moved = false; /* the mask is not `allowed` */
  pthread_mutex_lock(&lock);
  uint32_t seen = first_gen[me];
  for (;;) {
    while (gen == seen) pthread_cond_wait(&wake, &lock);
    seen = gen;
    if (me >= job_threads) continue; /* a job for fewer threads */
    const ops_team_fn fn = job_fn;
    void *const ctx = job_ctx;
    const int64_t n = job_n;
    const int cpu = job_cpu;
    pthread_mutex_unlock(&lock);
    if (can_move && cpu >= 0 && sched_getcpu() == cpu) {
      leave_cpu(cpu, &allowed);
      moved = true;
    } else if (moved) { /* back to the whole mask: the caller may have moved */
      pthread_setaffinity_np(pthread_self(), sizeof allowed, &allowed);
      moved = false;
    }
    work(seen, fn, ctx, n, me);
    pthread_mutex_lock(&lock);
  }
  return NULL;
}

/* Creates helpers 1..threads-1 that do not exist yet (under lock); returns how many
 * threads, the caller included, the job can have. Helpers block every signal: the
 * program's handlers run on its own threads. */
static int grow(int threads) {
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  while (started + 1 < threads) {
    pthread_attr_t at;
    pthread_t t;
    const int me = started + 1;
    first_gen[me] = gen;
    if (pthread_attr_init(&at)) break;
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    const int err = pthread_create(&t, &at, helper, (void *)(intptr_t)me);
    pthread_attr_destroy(&at);
    if (err) break;
    started = me;
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return started + 1 < threads ? started + 1 : threads;
}

void ops_team_run(int threads, int64_t n, ops_team_fn fn, void *ctx) {
  if (threads > OPS_TEAM_MAX) threads = OPS_TEAM_MAX;
  bool alone = threads <= 1 || n <= 1 || n >= (int64_t)0xffffffff ||
               pthread_mutex_trylock(&run_lock) != 0;
  if (!alone) {
    pthread_mutex_lock(&lock);
    threads = grow(threads);
    alone = threads <= 1;
    if (alone) {
      pthread_mutex_unlock(&lock);
      pthread_mutex_unlock(&run_lock);
    }
  }
  if (alone) {
    for (int64_t i = 0; i < n; i++) fn(ctx, i, 0);
    return;
  }
  const uint32_t g = ++gen;
  job_fn = fn;
  job_ctx = ctx;
  job_n = n;
  job_threads = threads;
  job_cpu = sched_getcpu();
  atomic_store_explicit(&done, 0, memory_order_relaxed);
  atomic_store_explicit(&claim, (uint64_t)g << 32, memory_order_release);
  pthread_cond_broadcast(&wake);
  pthread_mutex_unlock(&lock);
  work(g, fn, ctx, n, 0);
  ops_team_wait(&done, n);
  pthread_mutex_unlock(&run_lock);
}
