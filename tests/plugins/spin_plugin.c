/*
 * spin_plugin.c - entries whose cost is known, for testing and measuring comparisons:
 * each call runs a dependent chain of SPIN_FACTOR x N multiply-adds (a busy loop no
 * compiler can shorten), so two builds of this file with different factors differ by
 * exactly that much work. CMake builds it several times (tkb_spin_<label>.so).
 *
 *   SPIN_FACTOR  the work's scale (1.05: a 5% slowdown)
 *   SPIN_LABEL   this build's name, written to $TKB_SPIN_LOG (one line per call) when
 *                that variable names a file: how a test sees which side ran when
 *   SPIN_CRASH   spin_crash_forward_c raises SIGSEGV on its first call
 *
 * TKB_SPIN_ONLY=K (thousands of steps, as in the names) applies SPIN_FACTOR to
 * spin_<K>k_forward_c alone and runs the others at 1x: a change one entry takes while the
 * entries measured beside it in the same run stay put, as a code change does (a
 * machine's step moves them all).
 *
 * Entries (tags "spin"), in this order: spin_crash_forward_c (10k steps, unless
 * SPIN_CRASH), then spin_<K>k_forward_c for K in 10, 20, ..., 120 (thousands of steps
 * per call), then spin_empty_forward_c, whose function returns at once: what counting
 * an empty function gives (--method instructions subtracts exactly that, so 0).
 * Tagged "data" alone (no --tag spin selection meets it): spin_data_forward_c, whose work
 * hangs on its one input, an abstract float32 x of one value: 10k steps, or 20k where
 * x >= 0.5: how a test sees which distribution (--init) filled an entry's arrays.
 * Tagged "modes" alone: spin_modes_<R>x_<S>pct_forward_c (2x 50%, 3x 20%, 4x 80%), two
 * modes by construction: each call runs 20k steps or R times that, the first for S% of the
 * calls (drawn per call from a fixed seed): what the bimodality warning must find, with
 * its split where it is.
 */
#include <tkbench.h>

#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef SPIN_FACTOR
#define SPIN_FACTOR 1.0
#endif
#ifndef SPIN_LABEL
#define SPIN_LABEL "100"
#endif
#ifndef SPIN_CRASH
#define SPIN_CRASH 0
#endif

static int log_fd = -2; /* -2: not looked at yet; -1: no log */

static void log_call(void) {
  if (log_fd == -2) {
    const char *path = getenv("TKB_SPIN_LOG");
    log_fd = path && *path ? open(path, O_WRONLY | O_CREAT | O_APPEND, 0644) : -1;
  }
  if (log_fd >= 0 && write(log_fd, SPIN_LABEL "\n", sizeof SPIN_LABEL) < 0) log_fd = -1;
}

/* The factor for an entry of `steps` steps (TKB_SPIN_ONLY, read once). */
static double factor_for(int64_t steps) {
  static long only = -2; /* -2: not read yet; -1: every entry */
  if (only == -2) {
    const char *k = getenv("TKB_SPIN_ONLY");
    only = k && *k ? atol(k) * 1000 : -1;
  }
  return only < 0 || only == steps ? SPIN_FACTOR : 1.0;
}

/* The arguments, looked up by name once per entry: a lookup per call (two name
 * comparisons over the parameters, about 190 instructions) would be timed with the work. */
typedef struct spin_state {
  int64_t steps;
  bool crash;
} spin_state;

static tkb_status spin_prepare(const tkb_args *a, void **state) {
  spin_state *s = malloc(sizeof *s);
  if (!s) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "spin: out of memory for its state");
  const int64_t base = tkb_args_int(a, "steps");
  s->steps = (int64_t)(factor_for(base) * (double)base);
  s->crash = SPIN_CRASH && tkb_args_int(a, "crash");
  *state = s;
  return TKB_OK;
}

static void spin_release(void *state) { free(state); }

/* The work: a dependent chain of `steps` multiply-adds, its end written to y. */
static void spin_chain(int64_t steps, tkb_array *y) {
  uint64_t x = 88172645463325252ull;
  for (int64_t i = 0; i < steps; i++) x = x * 6364136223846793005ull + 1442695040888963407ull;
  ((float *)y->data)[0] = (float)(x >> 40);
}

static tkb_status spin_forward(const tkb_args *a, void *state, tkb_array *const *outputs) {
  (void)a;
  const spin_state *s = state;
  if (s->crash) raise(SIGSEGV);
  spin_chain(s->steps, outputs[0]);
  log_call();
  return TKB_OK;
}

static tkb_status spin_infer(const tkb_args *a, tkb_shapes *shapes) {
  (void)a;
  shapes->n_outputs = 1;
  shapes->outputs[0] = (tkb_spec)TKB_SPEC_INIT(TKB_FLOAT32, 1);
  shapes->output_names[0] = "y";
  return TKB_OK;
}

static const tkb_param spin_params[] = {{.name = "steps", .kind = TKB_KIND_INT},
                                        {.name = "crash", .kind = TKB_KIND_INT}};

static const tkb_fn spin = {.name = "spin", .params = spin_params, .n_params = 2, .infer = spin_infer,
                            .prepare = spin_prepare, .release = spin_release, .forward = spin_forward};

static tkb_status empty_forward(const tkb_args *a, void *state, tkb_array *const *outputs) {
  (void)a, (void)state, (void)outputs;
  return TKB_OK;
}

static const tkb_fn empty = {.name = "empty", .params = spin_params, .n_params = 2, .infer = spin_infer,
                             .forward = empty_forward};

/* spin_forward's chain, its length chosen by the data: 20k steps where x >= 0.5. */
static tkb_status data_forward(const tkb_args *a, void *state, tkb_array *const *outputs) {
  (void)state;
  const float x0 = ((const float *)tkb_args_array(a, "x")->data)[0];
  spin_chain(x0 >= 0.5f ? 20000 : 10000, outputs[0]);
  return TKB_OK;
}

static const tkb_param data_params[] = {{.name = "x", .kind = TKB_KIND_ARRAY}};

static const tkb_fn data = {.name = "spin_data", .params = data_params, .n_params = 1, .infer = spin_infer,
                            .forward = data_forward};

/* spin_chain of `steps`, or of `ratio_pct`% of that for the calls a splitmix draw puts
 * past `share_pct`% (the state counts the calls: each entry's sequence is fixed). */
typedef struct modes_state {
  int64_t steps, long_steps, share_pct;
  uint64_t draw;
} modes_state;

static tkb_status modes_prepare(const tkb_args *a, void **state) {
  modes_state *s = malloc(sizeof *s);
  if (!s) return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "spin_modes: out of memory for its state");
  s->steps = tkb_args_int(a, "steps");
  s->long_steps = s->steps * tkb_args_int(a, "ratio_pct") / 100;
  s->share_pct = tkb_args_int(a, "share_pct");
  s->draw = 0x5eed;
  *state = s;
  return TKB_OK;
}

static tkb_status modes_forward(const tkb_args *a, void *state, tkb_array *const *outputs) {
  (void)a;
  modes_state *s = state;
  uint64_t z = (s->draw += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  spin_chain((int64_t)(z % 100) < s->share_pct ? s->steps : s->long_steps, outputs[0]);
  return TKB_OK;
}

static const tkb_param modes_params[] = {{.name = "steps", .kind = TKB_KIND_INT},
                                         {.name = "ratio_pct", .kind = TKB_KIND_INT},
                                         {.name = "share_pct", .kind = TKB_KIND_INT}};

static const tkb_fn modes = {.name = "spin_modes", .params = modes_params, .n_params = 3, .infer = spin_infer,
                             .prepare = modes_prepare, .release = spin_release, .forward = modes_forward};

/* (ratio %, share of the short calls %): a 1:2 alternation's proportions and two
 * lopsided mixes */
static const int modes_shapes[][2] = {{200, 50}, {300, 20}, {400, 80}};
#define N_MODES (int)(sizeof modes_shapes / sizeof modes_shapes[0])

static char names[13][32];
static tkb_value args[13][2];

tkb_status tkb_plugin_init(void) {
  for (int k = 0; k < 13; k++) {
    const bool crash = k == 0;
    const int thousands = crash ? 10 : 10 * k;
    snprintf(names[k], sizeof names[k], crash ? "spin_crash" : "spin_%dk", thousands);
    args[k][0] = TKB_INT(thousands * 1000);
    args[k][1] = TKB_INT(crash);
    tkb_benchmark_def def = {.op = "spin", .name = names[k], .impl_name = "c", .fn = &spin,
                             .args = args[k], .n_args = 2, .mode = TKB_MODE_FORWARD,
                             .tags = "spin", .device_kind = "cpu"};
    tkb_status st = tkb_register_benchmark(&def);
    if (st) return st;
  }
  tkb_benchmark_def def = {.op = "spin", .name = "spin_empty", .impl_name = "c", .fn = &empty,
                           .args = args[1], .n_args = 2, .mode = TKB_MODE_FORWARD, .tags = "spin",
                           .device_kind = "cpu"};
  tkb_status st = tkb_register_benchmark(&def);
  if (st) return st;
  static tkb_value data_args[1];
  data_args[0] = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 1));
  def = (tkb_benchmark_def){.op = "spin", .name = "spin_data", .impl_name = "c", .fn = &data,
                            .args = data_args, .n_args = 1, .mode = TKB_MODE_FORWARD, .tags = "data",
                            .device_kind = "cpu"};
  st = tkb_register_benchmark(&def);
  static char modes_names[N_MODES][48];
  static tkb_value modes_args[N_MODES][3];
  for (int k = 0; k < N_MODES && !st; k++) {
    const int ratio = modes_shapes[k][0], share = modes_shapes[k][1];
    snprintf(modes_names[k], sizeof modes_names[k], "spin_modes_%gx_%dpct", ratio / 100.0, share);
    modes_args[k][0] = TKB_INT(20000);
    modes_args[k][1] = TKB_INT(ratio);
    modes_args[k][2] = TKB_INT(share);
    def = (tkb_benchmark_def){.op = "spin", .name = modes_names[k], .impl_name = "c", .fn = &modes,
                              .args = modes_args[k], .n_args = 3, .mode = TKB_MODE_FORWARD, .tags = "modes",
                              .device_kind = "cpu"};
    st = tkb_register_benchmark(&def);
  }
  return st;
}
