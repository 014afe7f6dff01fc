/*
 * bench_isolate.c - what running each entry in a worker process of its own costs, on
 * the CPU, against the same run in process.
 *
 *  1. Start cost: a worker that only sends one message back (fork, pipe, wait), against
 *     the same body called in process. Target: under 5 ms per worker.
 *  2. Per entry: a run of 20 entries of an empty function, isolated against in process,
 *     both through the runner (standardize, compile, 6 timed calls, counts, the result
 *     written as JSON and read back). The difference per entry is what isolation adds to
 *     a run's wall time.
 *  3. The timed region: the median of a 50 us busy loop as an isolated entry reports
 *     it, against the same entry in process. Target: within 2% (the timed region is the
 *     same code in either process).
 * Machines here are shared and noisy: every figure is a median of rounds, and the two
 * sides alternate within each round.
 *
 * usage: bench_isolate [rounds]   (default 11)
 */
#include "runner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *x, int n) {
  qsort(x, (size_t)n, sizeof *x, cmp);
  return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

static volatile double sink;

static tkb_status spin_forward(const tkb_args *a, void *state, tkb_array *const *out) {
  (void)state;
  const int64_t us = tkb_args_int(a, "us"), t0 = tkb__now_ns();
  double x = 1;
  while (tkb__now_ns() - t0 < us * 1000) x = x * 1.0000001 + 1e-9;
  sink = x;
  ((float *)out[0]->data)[0] = 0;
  return TKB_OK;
}

static tkb_status one_infer(const tkb_args *a, tkb_shapes *s) {
  (void)a;
  s->n_outputs = 1;
  s->outputs[0] = TKB_SPEC(TKB_FLOAT32, 1);
  s->output_names[0] = "y";
  return TKB_OK;
}

static const tkb_param params[] = {{.name = "us", .kind = TKB_KIND_INT}};
static const tkb_fn spin = {.name = "spin", .params = params, .n_params = 1, .infer = one_infer,
                            .forward = spin_forward};

#define N_EMPTY 20
static size_t empty_idx[N_EMPTY], spin_idx;

static void register_entries(void) {
  static tkb_value zero[1], fifty[1];
  static char names[N_EMPTY][32];
  zero[0] = TKB_INT(0);
  fifty[0] = TKB_INT(50);
  for (int k = 0; k <= N_EMPTY; k++) {
    if (k < N_EMPTY) snprintf(names[k], sizeof names[k], "iso_empty%d", k);
    tkb_benchmark_def d = {.op = "spin", .name = k < N_EMPTY ? names[k] : "iso_spin50us",
                           .impl_name = "c", .fn = &spin, .args = k < N_EMPTY ? zero : fifty,
                           .n_args = 1, .mode = TKB_MODE_FORWARD, .device_kind = "cpu"};
    if (tkb_register_benchmark(&d) != TKB_OK) {
      fprintf(stderr, "bench_isolate: %s\n", tkb_last_error());
      exit(1);
    }
    if (k < N_EMPTY) empty_idx[k] = tkb_registry_count() - 1;
    else spin_idx = tkb_registry_count() - 1;
  }
}

/* ---- 1. a worker's start ---- */
static void say_one(void *arg) {
  (void)arg;
  tkb__worker_send("x", 1);
}

static int got;
static void on_message(void *user, const char *text, size_t len) {
  (void)user;
  (void)text;
  got += (int)len;
}

/* ---- 2 and 3: runs through the runner ---- */
static double spin_median_ms;
static void on_done(void *user, size_t k, size_t n, const tkb__result *r) {
  (void)user;
  (void)k;
  (void)n;
  if (!r->bd) {
    fprintf(stderr, "bench_isolate: %s failed: %s\n", r->name, r->error ? r->error : "");
    exit(1);
  }
  spin_median_ms = r->bd->median_evaluation_time_ms;
}

static double run_ms(const size_t *idx, size_t n, bool isolate, int iterations) {
  tkb__runner runner = {.bench = {.iterations = iterations, .experiments = 1, .stop = "fixed"},
                        .isolate = isolate, .on_done = on_done};
  const int64_t t0 = tkb__now_ns();
  tkb__run_count c = tkb__run_entries(&runner, idx, n);
  if (c.done != n || c.failed) exit(1);
  return (double)(tkb__now_ns() - t0) / 1e6;
}

int main(int argc, char **argv) {
  const int rounds = argc > 1 ? atoi(argv[1]) : 11;
  if (rounds < 1) return 2;
  register_entries();
  tkb_set_num_threads(1);
  double start_w[rounds], start_p[rounds], entry_w[rounds], entry_p[rounds], spin_w[rounds],
      spin_p[rounds];
  for (int r = 0; r < rounds; r++) {
    /* 1 */
    const int starts = 20;
    int64_t t0 = tkb__now_ns();
    for (int i = 0; i < starts; i++) {
      tkb__worker_job job = {.body = say_one, .on_message = on_message};
      tkb__worker_end end;
      if (tkb__worker_run(&job, &end) != TKB_OK || end.how != TKB__WORKER_FINISHED) return 1;
    }
    start_w[r] = (double)(tkb__now_ns() - t0) / 1e6 / starts;
    t0 = tkb__now_ns();
    for (int i = 0; i < starts; i++) on_message(NULL, "x", 1), say_one(NULL);
    start_p[r] = (double)(tkb__now_ns() - t0) / 1e6 / starts;
    /* 2 */
    entry_w[r] = run_ms(empty_idx, N_EMPTY, true, 6) / N_EMPTY;
    entry_p[r] = run_ms(empty_idx, N_EMPTY, false, 6) / N_EMPTY;
    /* 3 */
    run_ms(&spin_idx, 1, true, 21);
    spin_w[r] = spin_median_ms;
    run_ms(&spin_idx, 1, false, 21);
    spin_p[r] = spin_median_ms;
  }
  const double sw = median(start_w, rounds), sp = median(start_p, rounds);
  const double ew = median(entry_w, rounds), ep = median(entry_p, rounds);
  const double pw = median(spin_w, rounds), pp = median(spin_p, rounds);
  printf("bench_isolate: medians of %d rounds\n", rounds);
  printf("  worker start (fork, pipe, one message, wait)  %8.3f ms   in process %8.4f ms   "
         "target < 5 ms: %s\n", sw, sp, sw < 5 ? "met" : "MISSED");
  printf("  per entry, empty function, 6 calls: isolated  %8.3f ms   in process %8.3f ms   "
         "isolation adds %.3f ms per entry\n", ew, ep, ew - ep);
  printf("  50 us busy loop's median: isolated            %8.4f ms   in process %8.4f ms   "
         "ratio %.4f, target within 2%%: %s\n", pw, pp, pw / pp,
         pw / pp > 0.98 && pw / pp < 1.02 ? "met" : "MISSED");
  return 0;
}
