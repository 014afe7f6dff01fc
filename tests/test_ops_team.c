/*
 * test_ops_team.c - the ops' helper team (ops/common/ops_team.h): every item of a job
 * runs exactly once, on a thread index below the team size; jobs of any size follow
 * each other (a helper that wakes late must never run an item of a newer job); a call
 * from inside an item runs its items on the calling thread; items may wait for earlier
 * ones (ops_team_wait), as gated_linear_unit's tiles wait for the widening.
 */
#include "check.h"

#include "../ops/common/ops_team.h"

#include <stdlib.h>
#include <string.h>

typedef struct job {
  int64_t n;
  int threads;
  _Atomic int *runs;      /* runs[i]: how many times item i ran */
  _Atomic int bad_thread; /* items given a thread index out of range */
  int64_t first;          /* items [0, first) must finish before the others start */
  _Atomic int64_t firsts_done;
  _Atomic int early;      /* later items that saw the first ones unfinished */
} job;

static void item(void *ctx, int64_t i, int thread) {
  job *j = ctx;
  if (thread < 0 || thread >= j->threads) atomic_fetch_add(&j->bad_thread, 1);
  if (i < j->first) {
    atomic_fetch_add(&j->runs[i], 1);
    atomic_fetch_add(&j->firsts_done, 1);
    return;
  }
  if (j->first > 0) {
    ops_team_wait(&j->firsts_done, j->first);
    if (atomic_load(&j->firsts_done) < j->first) atomic_fetch_add(&j->early, 1);
  }
  atomic_fetch_add(&j->runs[i], 1);
}

static void run_job(int threads, int64_t n, int64_t first) {
  job j = {.n = n, .threads = threads, .first = first};
  j.runs = calloc((size_t)(n > 0 ? n : 1), sizeof *j.runs);
  CHECK(j.runs != NULL);
  if (!j.runs) return;
  ops_team_run(threads, n, item, &j);
  int64_t wrong = 0;
  for (int64_t i = 0; i < n; i++) wrong += atomic_load(&j.runs[i]) != 1;
  CHECK_MSG(wrong == 0, "%lld of %lld items did not run exactly once (threads %d)",
            (long long)wrong, (long long)n, threads);
  CHECK(atomic_load(&j.bad_thread) == 0);
  CHECK(atomic_load(&j.early) == 0);
  free(j.runs);
}

/* an item that runs a whole job of its own: the inner call cannot take the team */
static void nested_item(void *ctx, int64_t i, int thread) {
  (void)i;
  (void)thread;
  run_job(4, 50, 0);
  atomic_fetch_add((_Atomic int *)ctx, 1);
}

int main(void) {
  for (int threads = 1; threads <= 4; threads++) {
    run_job(threads, 0, 0);
    run_job(threads, 1, 0);
    run_job(threads, 1000, 0);
    run_job(threads, 1000, 37); /* items waiting for the first 37 */
  }
  /* many small jobs in a row: helpers that wake late meet newer jobs */
  for (int r = 0; r < 2000; r++) run_job(1 + r % 3, 1 + r % 7, r % 2);
  _Atomic int nested = 0;
  ops_team_run(2, 6, nested_item, &nested);
  CHECK(atomic_load(&nested) == 6);
  run_job(OPS_TEAM_MAX + 5, 300, 0); /* more threads than the team has: capped */
  return CHECK_DONE();
}
