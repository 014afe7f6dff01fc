/*
 * warnings.c - the reasons to doubt a result, each a short sentence that says what was
 * seen and what would help (pyperf's habit). They are computed from the samples and
 * from the machine around them, and never change a number: a warned result is reported
 * like any other, with its warnings beside it.
 *
 *   no interval, or one wider than the rule's target 5 samples or fewer; the rule stopped
 *                                                    at max_time, experiments disagree, or
 *                                                    a floor of the interval is above it;
 *                                                    or narrow, but cut short before the
 *                                                    rule's minimum
 *   bimodal                                          two clusters of calls (distribution.c)
 *   busier than its cores                            a load average above the online cores
 *                                                    at the start or end
 *   calls too short for the clock                    under 100 clock reads, not batched
 *   batched                                          the times are batches' means, less
 *                                                    the loop's floor
 *   a slow first call                                over 10x the median
 *   more OpenMP threads than free cores              cpu threads > online cores minus the
 *                                                    cores other processes kept busy while
 *                                                    the entry ran, for calls that ran threads
 *
 * A count (the instructions method) has its own two: calls counted differently (it
 * should never happen for deterministic code), and counting with more than one OpenMP
 * thread (their waiting is counted too).
 */
#include "bench.h"
#include "std_fn.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

typedef struct sink {
  void (*add)(void *user, const char *kind, const char *text);
  void *user;
} sink;

static void say(const sink *s, const char *kind, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(const sink *s, const char *kind, const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  s->add(s->user, kind, buf);
}

/* "12.3 ms", "45.6 us", "789 ns": 3 significant digits. */
static void fmt_ms(double ms, char *buf, size_t cap) {
  const double a = fabs(ms);
  if (a >= 1e3) snprintf(buf, cap, "%.3g s", ms / 1e3);
  else if (a >= 1) snprintf(buf, cap, "%.3g ms", ms);
  else if (a >= 1e-3) snprintf(buf, cap, "%.3g us", ms * 1e3);
  else snprintf(buf, cap, "%.3g ns", ms * 1e6);
}

static void interval_too_wide(const sink *s, const tkb__evidence *ev, const tkb__run_facts *r) {
  if (ev->ci->too_few) {
    say(s, "interval", "%zu samples are too few for a 95%% interval of the median (it takes 6 or "
        "more; --stop ci takes as many as the interval needs)", ev->n);
    return;
  }
  if (r->converged || !(r->target > 0) || !(ev->ci->median > 0)) return;
  const double lo = 100 * (ev->ci->median - ev->ci->low) / ev->ci->median;
  const double hi = 100 * (ev->ci->high - ev->ci->median) / ev->ci->median;
  if (lo <= 100 * r->target && hi <= 100 * r->target) { /* narrow, but cut short */
    say(s, "interval", "the median's 95%% interval (-%.2g%%, +%.2g%%) is within the +-%.2g%% "
        "target, but the rule's time limit (max_time) came before its minimum of samples or "
        "timed work (min_samples, min_time), so it has not converged; a larger max_time would "
        "let it", lo, hi, 100 * r->target);
    return;
  }
  const char *bound = ev->ci->bound ? ev->ci->bound : "";
  if (!strcmp(bound, "layout floor") || !strcmp(bound, "clock")) {
    say(s, "interval", "the median's 95%% interval (-%.2g%%, +%.2g%%) is wider than the +-%.2g%% "
        "target: no interval is narrower than the %s (%s), however many calls are timed",
        lo, hi, 100 * r->target, bound,
        !strcmp(bound, "clock") ? "its tick over the calls of a sample"
                                : "what differs between processes, which a rerun sees and this run cannot");
    return;
  }
  if (r->timed_out || ev->experiments < 2) {
    say(s, "interval", "the median's 95%% interval (-%.2g%%, +%.2g%%) is wider than the +-%.2g%% "
        "target: the rule stopped at its time limit (max_time) after %zu samples; a quieter "
        "machine or a larger max_time would narrow it", lo, hi, 100 * r->target, ev->n);
    return;
  }
  char medians[160] = "";
  size_t len = 0;
  for (int e = 0; e < ev->experiments && e < 8 && len < sizeof medians; e++) {
    char t[32];
    fmt_ms(ev->experiment_median_ms[e], t, sizeof t);
    len += (size_t)snprintf(medians + len, sizeof medians - len, "%s%s", e ? ", " : "", t);
  }
  say(s, "interval", "the median's 95%% interval (-%.2g%%, +%.2g%%) is wider than the +-%.2g%% "
      "target although each experiment narrowed: their medians disagree (%s%s), so the machine "
      "changed between them (drift, throttling, other load); --interval-ms spaces them, "
      "--interleave spreads the drift over every entry", lo, hi, 100 * r->target, medians,
      ev->experiments > 8 ? ", ..." : "");
}

static void bimodal(const sink *s, const tkb__evidence *ev, const tkb_std_fn *f) {
  if (!ev->bimodal) return;
  char low[32], high[32];
  fmt_ms(ev->modes.low_ms, low, sizeof low);
  fmt_ms(ev->modes.high_ms, high, sizeof high);
  const bool omp = ev->parallel && strcmp(f->device->backend->kind, "cpu") == 0 && tkb_get_num_threads() > 1;
  say(s, "bimodal", "bimodal: %.0f%% of the calls near %s, %.0f%% near %s, so the median depends on the "
      "mix%s", 100 * ev->modes.low_fraction, low, 100 * (1 - ev->modes.low_fraction), high,
      omp ? " (OpenMP threads descheduled while they spin? OMP_WAIT_POLICY=PASSIVE or fewer "
            "threads often remove the slow cluster)" : "");
}

static void busy_machine(const sink *s, const tkb__run_facts *r) {
  const double cores = tkb__num_cpus();
  const double start = r->load_start.avg[0], end = r->load_end.avg[0];
  if (!(start > cores) && !(end > cores)) return;
  say(s, "load", "the load average (%.2f at the start, %.2f at the end) exceeds the %.0f online cores: "
      "other work competes for them", start, end, cores);
}

static void too_short(const sink *s, const tkb__evidence *ev, const tkb__run_facts *r) {
  if (ev->batch > 1 || r->method->reading > TKB__READ_CPU || !(r->clock_read_ns > 0)) return;
  const double floor_ms = 100 * r->clock_read_ns / 1e6;
  if (!(ev->stats->median < floor_ms)) return;
  char med[32];
  fmt_ms(ev->stats->median, med, sizeof med);
  say(s, "short_call", "calls take %s, under 100 reads of the clock (%.0f ns each): its cost is a large part "
      "of each time; --stop ci times batches of such calls", med, r->clock_read_ns);
}

static void batched(const sink *s, const tkb__evidence *ev, const tkb__run_facts *r) {
  if (ev->batch <= 1) return;
  char floor[96] = "";
  if (r->call_floor_ns > 0)
    snprintf(floor, sizeof floor, " less %.3g ns, the same loop's calls of an empty function", r->call_floor_ns);
  say(s, "batch", "timed in batches of %d calls (each call is shorter than a sample must last, 20 us "
      "or 100 reads of the clock): each evaluation time is a batch's mean per call%s, so the "
      "distribution is that of batches", ev->batch, floor);
}

static void slow_first_call(const sink *s, const tkb__evidence *ev, const tkb__run_facts *r) {
  if (!(r->first_call_ms > 10 * ev->stats->median) || !(ev->stats->median > 0)) return;
  char first[32];
  fmt_ms(r->first_call_ms, first, sizeof first);
  say(s, "first_call", "the first call took %s, %.0fx the median: lazy initialization or first-touch page "
      "faults; warm-up keeps it out of the samples, but a cold caller pays it",
      first, r->first_call_ms / ev->stats->median);
}

static void crowded_threads(const sink *s, const tkb__evidence *ev, const tkb_std_fn *f,
                            const tkb__run_facts *r) {
  /* an entry that runs on one thread (a plugin's plain loop) has no team to stall */
  if (strcmp(f->device->backend->kind, "cpu") != 0 || !ev->parallel) return;
  /* what other processes used while the entry ran; for a short entry, what both looks
   * (at its start and its end) saw */
  int others = tkb__load_others_between(&r->load_start, &r->load_end);
  if (others < 0)
    others = r->load_start.others < r->load_end.others ? r->load_start.others : r->load_end.others;
  if (others < 0) return;
  const int cores = tkb__num_cpus(), threads = tkb_get_num_threads();
  const int free_cores = cores - others > 0 ? cores - others : 0;
  if (threads <= 1 || threads <= free_cores) return;
  say(s, "threads", "the cpu ops run %d OpenMP threads, but other processes kept %d of the %d cores busy: "
      "a descheduled thread stalls each parallel region (--threads %d or a quieter machine)",
      threads, others, cores, free_cores > 0 ? free_cores : 1);
}

/* The instructions method: calls that counted differently, though the same code ran on
 * the same inputs. Nothing else about the machine matters to a count. */
static void count_spread(const sink *s, const tkb__evidence *ev, const tkb__run_facts *r) {
  const tkb__counter *c = r->counter;
  const double lo = c->min.v[TKB__EV_IR], hi = c->max.v[TKB__EV_IR];
  if (!(c->calls > 0) || hi == lo) return;
  const double med = ev->stats->median;
  say(s, "count_spread", "the calls counted from %.0f to %.0f instructions (a spread of %.0f, %.3g%% "
      "of the median), though each ran the same code on the same inputs: %s", lo, hi, hi - lo,
      med > 0 ? 100 * (hi - lo) / med : 0,
      strcmp(c->src->name, "callgrind") == 0
          ? "something besides the inputs steers it: memory it allocates in the call (the "
            "allocator's lists differ from call to call; OpenBLAS allocates in each product), "
            "threads waiting for each other, the time or random numbers it reads. A run repeats "
            "the same calls, so its counts repeat from run to run; compare resamples them"
          : "the CPU's counter adds a few instructions now and then (interrupts), and the code "
            "may do what Callgrind would find too (allocation, threads waiting, the time)");
}

static void counted_threads(const sink *s, const tkb_std_fn *f) {
  const int threads = tkb_get_num_threads();
  if (strcmp(f->device->backend->kind, "cpu") != 0 || threads <= 1) return;
  say(s, "threads", "counted with %d OpenMP threads: each count adds up every thread's instructions, "
      "those they run while waiting for each other at the parallel regions' ends included, "
      "which depend on the scheduling; --threads 1 counts the work alone", threads);
}

void tkb__warnings(const tkb__evidence *ev, const tkb__run_facts *facts, tkb_std_fn *f,
                   void (*add)(void *user, const char *kind, const char *text), void *user) {
  const sink s = {add, user};
  if (facts->counter) { /* a count: the machine's load, clocks and timers do not touch it */
    count_spread(&s, ev, facts);
    counted_threads(&s, f);
    return;
  }
  interval_too_wide(&s, ev, facts);
  bimodal(&s, ev, f);
  busy_machine(&s, facts);
  too_short(&s, ev, facts);
  batched(&s, ev, facts);
  slow_first_call(&s, ev, facts);
  crowded_threads(&s, ev, f, facts);
}
