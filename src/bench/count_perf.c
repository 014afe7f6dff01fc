/*
 * count_perf.c - counting with the CPU's own instruction counter (count.c says when):
 * perf_event_open's user-space instructions over every thread of the process, read right
 * before and after the call (perf_counters.c opens and reads them, as for
 * --perf-counters). Full speed, and the same work gives the same count up to the few
 * instructions an interrupt's return may add; but a machine without a PMU (most virtual
 * machines and CI runners) has no such counter, and no cache event is counted.
 */
#include "bench.h"

#include <pthread.h>
#include <stdlib.h>

typedef struct perf_state {
  tkb__perf perf;
  double read_total; /* perf.total[0] at the last read */
} perf_state;

static bool pmu_answers;
static pthread_once_t probe_once = PTHREAD_ONCE_INIT;

static void probe(void) { pmu_answers = tkb__perf_check("INSTRUCTIONS") == TKB_OK; }

static bool perf_available(void) {
  pthread_once(&probe_once, probe);
  return pmu_answers;
}

static void perf_close(tkb__counter *c) {
  perf_state *s = c->state;
  tkb__perf_close(&s->perf);
  free(s);
}

static tkb_status perf_open(tkb__counter *c) {
  perf_state *s = calloc(1, sizeof *s);
  if (!s) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "out of memory for the instruction counter");
  tkb_status st = tkb__perf_parse("INSTRUCTIONS", &s->perf);
  if (!st) st = tkb__perf_open(&s->perf);
  if (st) {
    tkb__perf_close(&s->perf);
    free(s);
    return st;
  }
  c->state = s;
  c->cache_events = false;
  return TKB_OK;
}

static void perf_start(tkb__counter *c) { tkb__perf_start(&((perf_state *)c->state)->perf); }

static void perf_stop(tkb__counter *c) { tkb__perf_stop(&((perf_state *)c->state)->perf, 1); }

static tkb_status perf_read(tkb__counter *c, tkb__events *out) {
  perf_state *s = c->state;
  *out = (tkb__events){{0}};
  out->v[TKB__EV_IR] = s->perf.total[0] - s->read_total;
  s->read_total = s->perf.total[0];
  return TKB_OK;
}

static const char *perf_describe(tkb__counter *c) {
  (void)c;
  return "perf_event_open: the CPU's instructions counter, user space, every thread";
}

const tkb__count_source tkb__count_perf = {
    .name = "perf_event",
    .available = perf_available,
    .open = perf_open,
    .start = perf_start,
    .stop = perf_stop,
    .read = perf_read,
    .describe = perf_describe,
    .close = perf_close,
};
