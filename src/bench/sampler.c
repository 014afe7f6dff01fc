/*
 * sampler.c - one sample: the warm-up policy, the meter around one timed call, the
 * device's clock state after it, and nvbench's throttle retry. The timed region holds
 * one call (or a batch of them: calls.c's loop), its synchronization and two clock reads;
 * everything it needs (the bound arguments, the outputs, the meter's buffers) exists
 * before it starts, and nothing here allocates, logs or locks. A batch's per-call floor,
 * the same loop over calls that do nothing, is measured at the start of each experiment
 * (tkb__sampler_call_floor) and subtracted from each call, as the CPU floor is from each
 * CPU time.
 */
#include "bench.h"
#include "std_fn.h"

#include <math.h>
#include <stdlib.h>
#include <time.h>

void tkb__sleep_ms(double ms) {
  if (ms <= 0) return;
  struct timespec ts = {.tv_sec = (time_t)(ms / 1000), .tv_nsec = (long)(fmod(ms, 1000.0) * 1e6)};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

/* An untimed call, waited for. The first one's wall time is kept: a first call far
 * slower than the rest (lazy initialization, first-touch page faults) is worth a word. */
static tkb_status warm_up(tkb__sampler *m) {
  const bool first = isnan(m->first_call_ms);
  const int64_t t0 = first ? tkb__now_ns() : 0;
  tkb_status st = tkb__std_invoke(m->f);
  if (!st) st = tkb_device_synchronize(m->dev);
  if (first) m->first_call_ms = (double)(tkb__now_ns() - t0) / 1e6;
  return st;
}

/* Google Benchmark's min_warmup_time: untimed calls until that much time has passed,
 * once, before the first timed call. */
static tkb_status warm_up_for(tkb__sampler *m) {
  m->warmed = true;
  const int64_t t0 = tkb__now_ns();
  tkb_status st = TKB_OK;
  while (!st && (double)(tkb__now_ns() - t0) / 1e6 < m->min_warmup_ms) st = warm_up(m);
  return st;
}

tkb_status tkb__sampler_experiment(tkb__sampler *m, tkb_device_state *state) {
  m->retries_left = m->throttle_retries;
  m->pause_ms = 50;
  tkb_status st = m->min_warmup_ms > 0 && !m->warmed ? warm_up_for(m) : TKB_OK;
  if (st) return st;
  if (m->read_state) {
    st = m->read_state(m->dev, state);
    if (st) return st;
  }
  return m->warmup_each ? TKB_OK : warm_up(m);
}

/* The instructions method's sample: f's call, waited for, between the counter's start
 * and stop, and no clock read; its count (the floor less) is the sample, and the CPU
 * time beside it is that count too, as cpu_time's is its time. The floor is counted
 * through this same code (floor: true), so what it subtracts is exactly what surrounds
 * the call, and this code is warm in the simulated caches by the first counted call. */
static tkb_status counted_call(tkb__sampler *m, tkb_std_fn *f, bool floor, tkb__events *e) {
  tkb__counter *c = m->counter;
  tkb_status st = c->cold_cache && !floor ? c->src->flush(c) : TKB_OK;
  if (st) return st;
  c->src->start(c);
  st = tkb__std_invoke(f);
  if (!st) st = tkb_device_synchronize(m->dev);
  c->src->stop(c);
  return st ? st : tkb__counter_take(c, floor, e);
}

/* The floor's stand-in for the function: returns at once, as an empty function does. */
static tkb_status empty_forward(const tkb_args *a, void *state, tkb_array *const *outputs) {
  (void)a, (void)state, (void)outputs;
  return TKB_OK;
}
static tkb_status empty_forward_res(const tkb_args *a, void *state, tkb_array *const *outputs,
                                    tkb_array *const *residuals) {
  (void)a, (void)state, (void)outputs, (void)residuals;
  return TKB_OK;
}
static tkb_status empty_vjp(const tkb_args *a, void *state, const tkb_array *const *residuals,
                            const tkb_array *const *cotangents, tkb_array *const *grads) {
  (void)a, (void)state, (void)residuals, (void)cotangents, (void)grads;
  return TKB_OK;
}

tkb_status tkb__sampler_count_floor(tkb__sampler *m) {
  tkb__counter *c = m->counter;
  /* the same std_fn, whose hooks are empty: the dispatch, the synchronization and the
   * counter's own start and stop are what is left */
  tkb_fn empty = *m->f->fn;
  empty.forward = empty_forward;
  empty.forward_res = empty_forward_res;
  empty.vjp = empty_vjp;
  tkb_std_fn shadow = *m->f;
  shadow.fn = &empty;
  enum { N = 5 }; /* the median: Callgrind's counts are all one; the first may miss */
  double v[TKB__N_EVENTS][N];
  for (int i = 0; i < N; i++) {
    tkb__events e;
    tkb_status st = counted_call(m, &shadow, true, &e);
    if (st) return st;
    for (int k = 0; k < TKB__N_EVENTS; k++) v[k][i] = e.v[k];
  }
  for (int k = 0; k < TKB__N_EVENTS; k++) {
    qsort(v[k], N, sizeof v[k][0], tkb__cmp_double);
    c->floor.v[k] = v[k][N / 2];
  }
  c->have_floor = true;
  return TKB_OK;
}

int tkb__sampler_count_settle(tkb__sampler *m) {
  enum { MAX_CALLS = 3 };
  double last = -1;
  for (int i = 1; i <= MAX_CALLS; i++) {
    tkb__events e;
    if (counted_call(m, m->f, true, &e) != TKB_OK) return i; /* the timed calls will say it */
    if (e.v[TKB__EV_IR] == last) return i;
    last = e.v[TKB__EV_IR];
  }
  return MAX_CALLS;
}

/* The timed call (or batch of calls, each waited for): the meter's before and after
 * hooks sit outside the two clock reads, and the CPU clock's reads outside those, so
 * that neither adds to what the method's clock sees; between the reads, only the loop of
 * calls (calls.c). *ms and *cpu_ms are per call; a batch's floor (what the same loop of
 * calls that do nothing takes) is subtracted, a call never below 0. `floor`: use the
 * floor (false while it is being chosen or measured). */
static tkb_status timed_calls(tkb__sampler *m, const tkb__calls *calls, bool floor, double *ms,
                              double *cpu_ms) {
  tkb_status st = tkb__meter_before(&m->meter);
  if (st) return st;
  int64_t (*read_clock)(void) = m->meter.clock;
  int64_t (*cpu_clock)(void) = m->cpu_clock;
  const int batch = m->batch;
  if (m->perf) tkb__perf_start(m->perf);
  const int64_t c0 = cpu_clock ? cpu_clock() : 0;
  const int64_t t0 = read_clock();
  st = tkb__calls_run(calls, batch);
  const int64_t t1 = read_clock();
  const int64_t c1 = cpu_clock ? cpu_clock() : 0;
  if (m->perf) tkb__perf_stop(m->perf, batch);
  if (!st) st = tkb__meter_after(&m->meter, t1 - t0, ms);
  if (st) return st;
  const bool subtract = floor && batch > 1 && m->call_floor_ns > 0;
  if (batch > 1) *ms = subtract ? fmax(0, *ms / batch - m->call_floor_ns / 1e6) : *ms / batch;
  if (!cpu_clock) {
    *cpu_ms = *ms; /* the method's clock is the CPU clock */
  } else {
    const double ns = (double)(c1 - c0 - m->cpu_floor_ns) / batch - (subtract ? m->loop_floor_ns : 0);
    *cpu_ms = ns > 0 ? ns / 1e6 : 0;
  }
  return TKB_OK;
}

/* The sample's call: counted (the instructions method: one call, no clock read, its count
 * in both *ms and *cpu_ms) or timed. */
static tkb_status timed_call(tkb__sampler *m, double *ms, double *cpu_ms) {
  if (m->counter) {
    tkb__events e;
    tkb_status st = counted_call(m, m->f, false, &e);
    *ms = *cpu_ms = e.v[TKB__EV_IR];
    return st;
  }
  return timed_calls(m, &m->calls, true, ms, cpu_ms);
}

static int cmp_i64(const void *a, const void *b) {
  const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

void tkb__sampler_cpu_floor(tkb__sampler *m) {
  m->cpu_floor_ns = 0;
  if (!m->cpu_clock) return;
  enum { N = 63 };
  int64_t d[N];
  int64_t (*read_clock)(void) = m->meter.clock;
  for (int i = 0; i < N; i++) {
    const int64_t c0 = m->cpu_clock();
    read_clock();
    read_clock();
    d[i] = m->cpu_clock() - c0;
  }
  qsort(d, N, sizeof *d, cmp_i64);
  m->cpu_floor_ns = d[N / 2];
}

void tkb__sampler_call_floor(tkb__sampler *m) {
  m->call_floor_ns = m->loop_floor_ns = NAN;
  if (m->meter.method->reading > TKB__READ_CPU) return; /* device time: no host loop in it */
  /* samples of hollow calls alternate with samples of none (the clock reads alone), so
   * that both see the same machine; each side's median */
  enum { N = 31 };
  double hollow[N], reads[N], cpu;
  tkb__calls calls = m->calls;
  tkb__calls_hollow(&calls);
  tkb__perf *perf = m->perf; /* these are not samples: not counted */
  m->perf = NULL;
  const int batch = m->batch;
  for (int i = 0; i < N; i++) {
    if (timed_calls(m, &calls, false, &hollow[i], &cpu) != TKB_OK) hollow[i] = NAN;
    const int64_t t0 = m->meter.clock();
    const int64_t t1 = m->meter.clock();
    reads[i] = (double)(t1 - t0) / 1e6;
  }
  m->perf = perf;
  qsort(hollow, N, sizeof *hollow, tkb__cmp_double);
  qsort(reads, N, sizeof *reads, tkb__cmp_double);
  if (!(hollow[N / 2] >= 0)) return; /* a hollow call failed: no floor */
  m->call_floor_ns = hollow[N / 2] * 1e6;
  m->loop_floor_ns = fmax(0, (hollow[N / 2] * batch - reads[N / 2]) * 1e6 / batch);
}

tkb_status tkb__sampler_calibrate(tkb__sampler *m, double *ms) {
  tkb__perf *perf = m->perf; /* these calls are not samples: not counted */
  m->perf = NULL;
  double best = INFINITY;
  for (int k = 0; k < 3; k++) {
    double t, cpu;
    tkb_status st = warm_up(m);
    if (!st) st = timed_call(m, &t, &cpu);
    if (st) {
      m->perf = perf;
      return st;
    }
    if (t < best) best = t;
  }
  m->perf = perf;
  *ms = best;
  return TKB_OK;
}

tkb_status tkb__sampler_take(tkb__sampler *m, double *ms, double *cpu_ms, bool *throttled) {
  for (;;) {
    tkb_status st = m->warmup_each ? warm_up(m) : TKB_OK;
    if (!st) st = timed_call(m, ms, cpu_ms);
    if (st) return st;
    *throttled = false;
    if (!m->read_state) return TKB_OK;
    /* Read after the call: a reason active now was active at its end. Retrying after a
     * pause lets the clocks recover (nvbench discards such samples). */
    tkb_device_state now;
    st = m->read_state(m->dev, &now);
    if (st) return st;
    *throttled = now.valid && now.throttled;
    if (!*throttled || m->retries_left <= 0) return TKB_OK;
    m->retries_left--;
    m->retries++;
    tkb__sleep_ms(m->pause_ms);
    m->pause_ms *= 2;
  }
}
