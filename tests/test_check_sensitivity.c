/*
 * test_check_sensitivity.c - what `tkbench check` is worth: the bugs it catches and the
 * false alarms it raises, measured on the real implementations.
 *
 * Every implementation registered for the device's kind, other than the references (the
 * shipped ops' and whatever else is registered, so a new op or device implementation is
 * measured as soon as it lands), is wrapped in a mutant: a tkb_fn whose hooks call the
 * real ones and then perturb one array they wrote, a forward output, a residual or a
 * gradient, the way a bug would. The mutant is registered beside the real entry (impl
 * "<impl>.mutant") and checked against the reference as any entry is. The plantings:
 *   scale 0.5%, scale 1%  every element times 1.005 or 1.01
 *   scale at target       times 1 + the smallest systematic error the check promises
 *                         to catch in the array's dtype: 1% bfloat16, 0.2% float16,
 *                         0.01% float32 (and 1e-9 float64)
 *   bias 0.02 rms         every element plus 0.02 x the array's root mean square
 *   one element           the middle element plus half the largest magnitude
 *   tail 1/16             the last sixteenth of the elements zeroed
 *   grads 2%              a gradient times 1.02 (vjp modes)
 * All must be caught except a scale of 0.5% in bfloat16 (below its 1% target), which is
 * counted but not required. A planting that changes no value (a tail already zero) is
 * not counted. The unmodified implementations are checked with several seeds: every
 * failure among them is a false alarm.
 *
 * Each op's smallest spec (fewest elements) also gets float16 and float32 variants: the
 * same entries with every floating abstract argument in that dtype (float16's drawn from
 * N(0, 1/2), so that no gradient overflows it), registered for every implementation (the
 * reference included), so each dtype's target is measured.
 *
 * Usage: test_check_sensitivity [--full] [--device NAME] [--seeds N] [--mutant-seeds N]
 *                               [--op NAME] [--verbose]
 * Without --full (what `make test` runs): each op's smallest spec in forward_and_vjp mode
 * (forward outputs and gradients, through the shared-cotangent path), one seed, five
 * plantings each, and the float16 and float32 variants of the first op at their targets;
 * the exit status says whether every required planting was caught and nothing unmodified
 * failed. With TKB_TEST_QUICK set (the sanitizer tree) lighter still: the other ops in
 * forward mode with two plantings, and the float32 variant alone. --full: every cpu-tagged entry of the device's kind in every mode, every
 * planting on every array, unmodified entries over --seeds (default 10) seeds and
 * mutants over --mutant-seeds (default 1); prints the table docs/CHECK.md records.
 */
#include "tkbench.h"
#include "check.h"
#include "std_fn.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LEN(a) (sizeof(a) / sizeof((a)[0]))

/* ---- the plantings ---- */

typedef enum kind { SCALE_HALF, SCALE_1, SCALE_TARGET, BIAS, ONE, TAIL, GRAD_2, N_KINDS } kind;
static const char *const kind_names[N_KINDS] = {"scale 0.5%", "scale 1%",   "scale at target",
                                                "bias 0.02 rms", "one element", "tail 1/16",
                                                "grads 2%"};

/* The smallest uniform scale error the check promises to catch in dtype. */
static double target(tkb_dtype dt) {
  switch (dt) {
    case TKB_BFLOAT16: return 1e-2;
    case TKB_FLOAT16: return 2e-3;
    case TKB_FLOAT32: return 1e-4;
    case TKB_FLOAT64: return 1e-9;
    default: return 0.25; /* float8 */
  }
}

/* Whether a planting of kind k in an array of dtype dt must be caught. */
static bool required(kind k, tkb_dtype dt) { return k != SCALE_HALF || 0.005 >= target(dt); }

/* ---- the mutant: a wrapper of a real implementation ---- */

typedef struct mutant {
  tkb_fn fn;           /* the wrapper; fn.ctx points back here */
  const tkb_fn *inner; /* the real implementation */
  bool active;         /* plant in the next calls */
  kind k;
  int target;          /* index among what f_std returns in the entry's mode */
  bool changed;        /* the planting changed a value */
} mutant;

static mutant *mutant_of(const tkb_args *a) { return a->fn->ctx; }

/* The call as the real implementation sees it (its hooks may read a->fn). */
static tkb_args inner_args(const tkb_args *a) {
  tkb_args b = *a;
  b.fn = mutant_of(a)->inner;
  return b;
}

/* Perturbs one array the implementation wrote, on any device (through a cpu copy). */
static tkb_status plant(mutant *m, tkb_array *arr) {
  tkb_array *h = NULL, *before = NULL;
  tkb_device *cpu;
  tkb_status st = tkb_device_get("cpu", &cpu);
  if (!st) st = tkb_array_copy(arr, cpu, &h);
  if (!st) st = tkb_array_copy(h, NULL, &before);
  if (st) {
    tkb_array_free(h);
    return st;
  }
  const int64_t n = h->numel;
  double sq = 0, big = 0;
  int64_t finite = 0;
  for (int64_t i = 0; i < n; i++) {
    const double v = tkb_array_get_f64(h, i);
    if (!isfinite(v)) continue;
    sq += v * v;
    finite++;
    if (fabs(v) > big) big = fabs(v);
  }
  const double rms = finite ? sqrt(sq / (double)finite) : 0;
  const double scale = m->k == SCALE_HALF   ? 1.005
                       : m->k == SCALE_1    ? 1.01
                       : m->k == SCALE_TARGET ? 1 + target(h->spec.dtype)
                       : m->k == GRAD_2     ? 1.02
                                            : 1.0;
  for (int64_t i = 0; i < n; i++) {
    const double v = tkb_array_get_f64(h, i);
    double w = v * scale;
    if (m->k == BIAS) w = v + 0.02 * rms;
    if (m->k == ONE && i == n / 2) w = v + 0.5 * big;
    if (m->k == TAIL && i >= n - (n + 15) / 16) w = 0;
    tkb_array_set_f64(h, i, w);
  }
  m->changed = m->changed || !tkb_array_equal(h, before);
  st = tkb_array_copy_into(arr, h);
  tkb_array_free(before);
  tkb_array_free(h);
  return st;
}

/* Counts of the real implementation's outputs and residuals for this call. */
static tkb_status counts(const tkb_args *a, int *n_out, int *n_res) {
  tkb_args b = inner_args(a);
  tkb_shapes s = {0};
  tkb_status st = mutant_of(a)->inner->infer(&b, &s);
  *n_out = s.n_outputs;
  *n_res = s.n_residuals;
  return st;
}

static tkb_status w_infer(const tkb_args *a, tkb_shapes *s) {
  tkb_args b = inner_args(a);
  return mutant_of(a)->inner->infer(&b, s);
}

static tkb_status w_prepare(const tkb_args *a, void **state) {
  tkb_args b = inner_args(a);
  return mutant_of(a)->inner->prepare(&b, state);
}

static tkb_status w_forward(const tkb_args *a, void *state, tkb_array *const *out) {
  mutant *m = mutant_of(a);
  tkb_args b = inner_args(a);
  tkb_status st = m->inner->forward(&b, state, out);
  if (st || !m->active || a->mode != TKB_MODE_FORWARD) return st;
  int n_out, n_res;
  st = counts(a, &n_out, &n_res);
  return st || m->target >= n_out ? st : plant(m, out[m->target]);
}

static tkb_status w_forward_res(const tkb_args *a, void *state, tkb_array *const *out,
                                tkb_array *const *res) {
  mutant *m = mutant_of(a);
  tkb_args b = inner_args(a);
  tkb_status st = m->inner->forward_res(&b, state, out, res);
  /* vjp mode runs forward_res once at standardization: its outputs are not checked */
  if (st || !m->active || (a->mode != TKB_MODE_FORWARD_RES && a->mode != TKB_MODE_FORWARD_AND_VJP))
    return st;
  int n_out, n_res;
  st = counts(a, &n_out, &n_res);
  if (st) return st;
  if (m->target < n_out) return plant(m, out[m->target]);
  if (a->mode == TKB_MODE_FORWARD_RES && m->target < n_out + n_res)
    return plant(m, res[m->target - n_out]);
  return TKB_OK;
}

static tkb_status w_vjp(const tkb_args *a, void *state, const tkb_array *const *res,
                        const tkb_array *const *ct, tkb_array *const *grads) {
  mutant *m = mutant_of(a);
  tkb_args b = inner_args(a);
  tkb_status st = m->inner->vjp(&b, state, res, ct, grads);
  if (st || !m->active) return st;
  int n_out, n_res;
  st = counts(a, &n_out, &n_res);
  if (st) return st;
  int g = m->target - (a->mode == TKB_MODE_FORWARD_AND_VJP ? n_out : 0);
  /* f_std returns the gradients that exist: one slot per floating array parameter (an
   * absent optional one is a NULL slot) */
  int slot = 0;
  for (size_t p = 0; p < a->fn->n_params; p++) {
    if (a->fn->params[p].kind != TKB_KIND_ARRAY) continue;
    const tkb_spec *s = tkb_args_spec(a, a->fn->params[p].name);
    if (s && !tkb_dtype_is_float(s->dtype)) continue;
    tkb_array *grad = grads[slot++];
    if (!grad) continue;
    if (g-- == 0) return plant(m, grad);
  }
  return TKB_OK;
}

static mutant *mutant_new(const tkb_fn *inner) {
  mutant *m = calloc(1, sizeof *m);
  if (!m) return NULL;
  m->inner = inner;
  m->fn = *inner;
  m->fn.infer = w_infer;
  m->fn.prepare = inner->prepare ? w_prepare : NULL;
  m->fn.forward = w_forward;
  m->fn.forward_res = inner->forward_res ? w_forward_res : NULL;
  m->fn.vjp = inner->vjp ? w_vjp : NULL;
  m->fn.ctx = m;
  return m;
}

/* ---- what the run owns until the end (the registry points into it) ---- */

static void **owned;
static size_t n_owned, cap_owned;

static void *own(void *p) {
  if (!p) {
    fprintf(stderr, "out of memory\n");
    exit(1);
  }
  if (n_owned == cap_owned) {
    cap_owned = cap_owned ? 2 * cap_owned : 64;
    owned = realloc(owned, cap_owned * sizeof *owned);
    if (!owned) exit(1);
  }
  return owned[n_owned++] = p;
}

static void free_owned(void) {
  for (size_t i = 0; i < n_owned; i++) free(owned[i]);
  free(owned);
}

/* ---- entries ---- */

static tkb_status entry_args(const tkb_benchmark_def *d, const tkb_value **v, size_t *nv,
                             const tkb_kwarg **kw, size_t *nkw) {
  *v = d->args;
  *nv = d->n_args;
  *kw = d->kwargs;
  *nkw = d->n_kwargs;
  return d->factory ? d->factory(d->user, v, nv, kw, nkw) : TKB_OK;
}

/* Elements in an entry's array arguments (its size, for picking the smallest spec). */
static int64_t entry_numel(size_t i) {
  const tkb_benchmark_def *d = tkb_registry_get(i);
  const tkb_value *v;
  const tkb_kwarg *kw;
  size_t nv, nkw;
  if (entry_args(d, &v, &nv, &kw, &nkw)) return INT64_MAX;
  tkb_std_fn *f = NULL;
  tkb_arrays *args = NULL;
  tkb_std_opts o = {.mode = TKB_MODE_FORWARD, .no_init = true};
  int64_t n = 0;
  if (tkb_standardize_function(d->fn, v, nv, kw, nkw, &o, &f, &args)) return INT64_MAX;
  for (size_t k = 0; k < tkb_arrays_count(args); k++) n += tkb_arrays_get(args, k)->numel;
  tkb_std_fn_free(f);
  tkb_arrays_free(args);
  return n;
}

/* Registers the entries of (op, spec) again, every floating abstract argument in dtype,
 * as spec "<spec>.<dtype>"; returns how many. */
static int register_variant(const char *op, const char *spec, tkb_dtype dtype) {
  char name[256];
  snprintf(name, sizeof name, "%s.%s", spec, tkb_dtype_name(dtype));
  const size_t n = tkb_registry_count();
  int added = 0;
  for (size_t i = 0; i < n; i++) {
    const tkb_benchmark_def *d = tkb_registry_get(i);
    if (strcmp(d->op, op) != 0 || strcmp(d->name, spec) != 0) continue;
    const tkb_value *v;
    const tkb_kwarg *kw;
    size_t nv, nkw;
    if (entry_args(d, &v, &nv, &kw, &nkw)) continue;
    tkb_value *v2 = own(calloc(nv + 1, sizeof *v2));
    tkb_kwarg *kw2 = own(calloc(nkw + 1, sizeof *kw2));
    memcpy(v2, v, nv * sizeof *v2);
    memcpy(kw2, kw, nkw * sizeof *kw2);
    for (size_t k = 0; k < nv + nkw; k++) {
      tkb_value *x = k < nv ? &v2[k] : &kw2[k - nv].value;
      if (x->tag != TKB_VALUE_ABSTRACT || !tkb_dtype_is_float(x->spec.dtype)) continue;
      x->spec.dtype = dtype;
      /* products of N(0,1) values summed over the specs' lengths reach float16's largest
       * value (65504) in the gradients, where the two sides then disagree on which
       * elements overflow: float16's draws are N(0, 1/2) (a value's spec keeps its own
       * initializer) */
      static const tkb_init half_normal = {.kind = TKB_INIT_NORMAL, .a = 0.0, .b = 0.5};
      if (dtype == TKB_FLOAT16 && !x->init) x->init = &half_normal;
    }
    tkb_benchmark_def e = *d;
    e.name = name;
    e.args = v2;
    e.n_args = nv;
    e.kwargs = kw2;
    e.n_kwargs = nkw;
    e.factory = NULL;
    e.user = NULL;
    if (tkb_register_benchmark(&e) == TKB_OK) added++;
  }
  return added;
}

/* Registers a mutant beside real entry i: the same entry with impl "<impl>.mutant". */
static size_t register_mutant(size_t i, mutant **out) {
  const tkb_benchmark_def *d = tkb_registry_get(i);
  mutant *m = own(mutant_new(d->fn));
  char impl[128];
  snprintf(impl, sizeof impl, "%s.mutant", d->impl_name);
  tkb_benchmark_def e = *d;
  e.impl_name = impl;
  e.fn = &m->fn;
  if (tkb_register_benchmark(&e) != TKB_OK) {
    fprintf(stderr, "registering a mutant of %s: %s\n", tkb_registry_full_name(i), tkb_last_error());
    exit(1);
  }
  *out = m;
  return tkb_registry_count() - 1;
}

/* ---- tallies ---- */

#define MAX_ROWS 256

typedef struct row {
  char device[32], op[64], dtypes[32]; /* dtypes: "as registered" or a variant's dtype */
  tkb_mode mode;
  int planted[N_KINDS], caught[N_KINDS], required_missed[N_KINDS];
  int unmodified, false_alarms;
} row;

static row rows[MAX_ROWS];
static int n_rows;

static row *row_for(const char *device, const char *op, const char *spec, tkb_mode mode) {
  const char *dot = strchr(spec, '.');
  const char *dtypes = dot ? dot + 1 : "as registered";
  for (int r = 0; r < n_rows; r++)
    if (!strcmp(rows[r].device, device) && !strcmp(rows[r].op, op) &&
        !strcmp(rows[r].dtypes, dtypes) && rows[r].mode == mode)
      return &rows[r];
  if (n_rows == MAX_ROWS) exit(1);
  row *r = &rows[n_rows++];
  snprintf(r->device, sizeof r->device, "%s", device);
  snprintf(r->op, sizeof r->op, "%s", op);
  snprintf(r->dtypes, sizeof r->dtypes, "%s", dtypes);
  r->mode = mode;
  return r;
}

/* ---- the run ---- */

typedef struct options {
  bool full, verbose;
  const char *device, *op;
  int seeds, mutant_seeds;
} options;

typedef struct plan {
  kind k;
  int target; /* -1: every array; -2: the last one */
} plan;

/* What the quick run plants in each forward_and_vjp entry (targets: f_std's outputs), and
 * in a forward entry of the lighter one. */
static const plan quick_plans[] = {{SCALE_1, 0}, {BIAS, 0}, {ONE, -2}, {TAIL, -2}, {GRAD_2, -1}};
static const plan light_plans[] = {{SCALE_1, 0}, {ONE, -2}};

/* Checks entry e (or its mutant); an error is printed. */
static tkb_status check(size_t e, uint64_t seed, const char *device, tkb_check_result **r) {
  *r = NULL;
  tkb_status st = tkb_check_entry(e, &(tkb_check_opts){.seed = seed, .device = device}, r);
  if (st) printf("  %s %s (seed %llu): %s: %s\n", st == TKB_ERR_UNSUPPORTED ? "cannot run" : "ERROR",
                 tkb_registry_full_name(e), (unsigned long long)seed, tkb_status_name(st),
                 tkb_last_error());
  return st;
}

/* The number of forward outputs f_std returns first (forward_and_vjp), so that the
 * arrays after them are gradients; all of them are gradients in vjp mode. */
static int first_grad(size_t e) {
  const tkb_benchmark_def *d = tkb_registry_get(e);
  if (d->mode == TKB_MODE_VJP) return 0;
  if (d->mode != TKB_MODE_FORWARD_AND_VJP) return INT32_MAX;
  const tkb_value *v;
  const tkb_kwarg *kw;
  size_t nv, nkw;
  tkb_std_fn *f = NULL;
  tkb_arrays *args = NULL;
  tkb_std_opts o = {.mode = TKB_MODE_FORWARD, .no_init = true};
  if (entry_args(d, &v, &nv, &kw, &nkw) || tkb_standardize_function(d->fn, v, nv, kw, nkw, &o, &f, &args))
    return INT32_MAX;
  int n = f->shapes.n_outputs;
  tkb_std_fn_free(f);
  tkb_arrays_free(args);
  return n;
}

/* One planting in the mutant of `subject`, checked; tallied into r. */
static void plant_and_check(const options *o, size_t subject, size_t mut_entry, mutant *m,
                            const tkb_check_result *clean, kind k, int t, uint64_t seed, row *rw) {
  const tkb_check_output *out = &clean->outputs[t];
  if (!tkb_dtype_is_float(out->spec.dtype)) return;
  m->active = true;
  m->k = k;
  m->target = t;
  m->changed = false;
  tkb_check_result *r = NULL;
  const bool ok = check(mut_entry, seed, o->device, &r) == TKB_OK;
  m->active = false;
  if (ok && !m->changed) {
    tkb_check_result_free(r);
    return; /* nothing was planted */
  }
  const bool caught = !ok || !r->passed;
  rw->planted[k]++;
  rw->caught[k] += caught;
  const bool req = required(k, out->spec.dtype);
  if (!caught && req) rw->required_missed[k]++;
  if (ok && ((!caught && req) || o->verbose)) {
    const tkb_check_output *c = &r->outputs[t];
    printf("  %s %s: %s on '%s' %s (seed %llu): allclose %.3g, rel_l2 %.3g (max %.3g), scale %.3g "
           "(max %.3g), bias %.3g (max %.3g)\n",
           caught ? "caught" : req ? "MISSED" : "missed (not required)",
           tkb_registry_full_name(subject), kind_names[k], out->name,
           tkb_dtype_name(out->spec.dtype), (unsigned long long)seed,
           c->criteria[TKB_CRITERION_ALLCLOSE].value, c->criteria[TKB_CRITERION_REL_L2].value,
           c->criteria[TKB_CRITERION_REL_L2].threshold, c->criteria[TKB_CRITERION_SCALE].value,
           c->criteria[TKB_CRITERION_SCALE].threshold, c->criteria[TKB_CRITERION_BIAS].value,
           c->criteria[TKB_CRITERION_BIAS].threshold);
  }
  tkb_check_result_free(r);
}

/* Everything about one subject entry: unmodified over the seeds, then the plantings. */
static void measure(const options *o, size_t subject, const plan *plans, size_t n_plans) {
  const tkb_benchmark_def *d = tkb_registry_get(subject);
  row *rw = row_for(o->device, d->op, d->name, d->mode);
  tkb_check_result *clean = NULL;
  for (int s = 0; s < o->seeds; s++) {
    tkb_check_result *r = NULL;
    const tkb_status st = check(subject, (uint64_t)s, o->device, &r);
    /* cannot run here (a dtype a variant gives that the implementation lacks): not
     * measured; any other error fails an unmodified entry */
    if (st == TKB_ERR_UNSUPPORTED) return;
    rw->unmodified++;
    if (st) {
      rw->false_alarms++;
      continue;
    }
    if (!r->passed) {
      rw->false_alarms++;
      for (int k = 0; k < r->n_outputs; k++)
        if (!r->outputs[k].passed)
          printf("  FALSE ALARM %s (seed %d) output '%s': %s %.3g, threshold %.3g\n",
                 tkb_registry_full_name(subject), s, r->outputs[k].name,
                 tkb_criterion_name(r->outputs[k].failed),
                 r->outputs[k].criteria[r->outputs[k].failed].value,
                 r->outputs[k].criteria[r->outputs[k].failed].threshold);
    }
    if (s == 0) clean = r;
    else tkb_check_result_free(r);
  }
  if (!clean) return;
  mutant *m = NULL;
  size_t mut_entry = register_mutant(subject, &m);
  const int grads_from = first_grad(subject);
  for (int s = 0; s < o->mutant_seeds; s++)
    for (size_t p = 0; p < n_plans; p++) {
      const kind k = plans[p].k;
      for (int t = 0; t < clean->n_outputs; t++) {
        if (plans[p].target >= 0 && t != plans[p].target) continue;
        if (plans[p].target == -2 && t != clean->n_outputs - 1) continue;
        if (k == GRAD_2 && t < grads_from) continue;
        if (k == GRAD_2 && plans[p].target == -1 && !o->full && t != grads_from) continue;
        plant_and_check(o, subject, mut_entry, m, clean, k, t, (uint64_t)s, rw);
      }
    }
  tkb_check_result_free(clean);
}

static void usage(void) {
  fprintf(stderr, "usage: test_check_sensitivity [--full] [--device NAME] [--seeds N] "
                  "[--mutant-seeds N] [--op NAME] [--verbose]\n");
  exit(2);
}

static void print_table(const options *o) {
  printf("\n| device | op | dtypes | mode |");
  for (int k = 0; k < N_KINDS; k++) printf(" %s |", kind_names[k]);
  printf(" false alarms |\n|---|---|---|---|");
  for (int k = 0; k < N_KINDS; k++) printf("--:|");
  printf("--:|\n");
  int planted = 0, caught = 0, missed = 0, unmodified = 0, alarms = 0;
  for (int r = 0; r < n_rows; r++) {
    const row *rw = &rows[r];
    printf("| %s | %s | %s | %s |", rw->device, rw->op, rw->dtypes, tkb_mode_name(rw->mode));
    for (int k = 0; k < N_KINDS; k++) {
      if (!rw->planted[k]) printf(" - |");
      else printf(" %d/%d%s |", rw->caught[k], rw->planted[k], rw->required_missed[k] ? " (!)" : "");
      planted += rw->planted[k];
      caught += rw->caught[k];
      missed += rw->required_missed[k];
    }
    printf(" %d/%d |\n", rw->false_alarms, rw->unmodified);
    unmodified += rw->unmodified;
    alarms += rw->false_alarms;
  }
  printf("\n%d of %d plantings caught; %d required ones missed (marked (!)); %d false alarms "
         "in %d checks of unmodified entries (%d seed%s)\n",
         caught, planted, missed, alarms, unmodified, o->seeds, o->seeds == 1 ? "" : "s");
}

int main(int argc, char **argv) {
  options o = {.device = "cpu", .seeds = -1, .mutant_seeds = -1};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--full")) o.full = true;
    else if (!strcmp(a, "--verbose")) o.verbose = true;
    else if (!strcmp(a, "--device") && i + 1 < argc) o.device = argv[++i];
    else if (!strcmp(a, "--op") && i + 1 < argc) o.op = argv[++i];
    else if (!strcmp(a, "--seeds") && i + 1 < argc) o.seeds = atoi(argv[++i]);
    else if (!strcmp(a, "--mutant-seeds") && i + 1 < argc) o.mutant_seeds = atoi(argv[++i]);
    else usage();
  }
  if (o.seeds < 0) o.seeds = o.full ? 10 : 1;
  if (o.mutant_seeds < 0) o.mutant_seeds = 1;
  if (o.seeds < 1 || o.mutant_seeds < 1) usage();
  tkb_device *dev;
  if (tkb_device_get(o.device, &dev) != TKB_OK) {
    printf("SKIPPED: device %s: %s\n", o.device, tkb_last_error());
    return 77;
  }
  char kind[32];
  snprintf(kind, sizeof kind, "%s", o.device);
  kind[strcspn(kind, ":")] = '\0';
  CHECK_OK(tkb_register_builtin_ops());
  const time_t t0 = time(NULL);

  /* each op's smallest cpu-tagged spec, for the dtype variants and the quick run */
  const size_t n_real = tkb_registry_count();
  char ops[32][64], smallest[32][256];
  int64_t best[32];
  int n_ops = 0;
  for (size_t i = 0; i < n_real; i++) {
    const tkb_benchmark_def *d = tkb_registry_get(i);
    if (!tkb_registry_has_tag(i, "cpu") || d->mode != TKB_MODE_FORWARD || strcmp(d->impl_name, "reference"))
      continue;
    if (o.op && strcmp(o.op, d->op)) continue;
    int k = 0;
    while (k < n_ops && strcmp(ops[k], d->op)) k++;
    if (k == n_ops) {
      if (n_ops == (int)LEN(ops)) break;
      snprintf(ops[n_ops], sizeof ops[0], "%s", d->op);
      best[n_ops++] = INT64_MAX;
    }
    const int64_t n = entry_numel(i);
    if (n < best[k]) {
      best[k] = n;
      snprintf(smallest[k], sizeof smallest[0], "%s", d->name);
    }
  }
  /* Under TKB_TEST_QUICK (the sanitizer tree, where the float64 references run many
   * times slower) the quick case is lighter still: only the first op in
   * forward_and_vjp, the others in forward mode, and the float32 variant alone. */
  const bool lighter = !o.full && check_quick();
  /* float16 and float32 variants: of every op in the full run, of the first in the quick one */
  const tkb_dtype variants[] = {TKB_FLOAT16, TKB_FLOAT32};
  for (int k = 0; k < (o.full ? n_ops : n_ops > 0); k++)
    for (size_t v = 0; v < LEN(variants); v++)
      if (!lighter || variants[v] == TKB_FLOAT32) register_variant(ops[k], smallest[k], variants[v]);

  /* the subjects: real, non-reference entries of the device's kind */
  size_t n_subjects = 0, *subjects = own(calloc(tkb_registry_count() + 1, sizeof *subjects));
  for (size_t i = 0; i < tkb_registry_count(); i++) {
    const tkb_benchmark_def *d = tkb_registry_get(i);
    if (!strcmp(d->impl_name, "reference") || strcmp(d->device_kind, kind)) continue;
    if (o.op && strcmp(o.op, d->op)) continue;
    const bool variant = strchr(d->name, '.') != NULL;
    if (!tkb_registry_has_tag(i, "cpu")) continue;
    if (!o.full) {
      /* the smallest spec per op in forward_and_vjp; the variants with their targets */
      int k = 0;
      while (k < n_ops && strcmp(ops[k], d->op)) k++;
      const tkb_mode mode = lighter && (k > 0 || variant) ? TKB_MODE_FORWARD : TKB_MODE_FORWARD_AND_VJP;
      if (k == n_ops || d->mode != mode) continue;
      if (!variant && strcmp(d->name, smallest[k])) continue;
    }
    subjects[n_subjects++] = i;
  }
  printf("check sensitivity on %s (%s): %zu entries, %d seed%s unmodified, %d seed%s planted\n",
         o.device, tkb_device_description(dev), n_subjects, o.seeds, o.seeds == 1 ? "" : "s",
         o.mutant_seeds, o.mutant_seeds == 1 ? "" : "s");
  const plan all_plans[] = {{SCALE_HALF, -1}, {SCALE_1, -1}, {SCALE_TARGET, -1}, {BIAS, -1},
                            {ONE, -1},        {TAIL, -1},    {GRAD_2, -1}};
  const plan variant_plans[] = {{SCALE_TARGET, 0}, {GRAD_2, -1}};
  for (size_t s = 0; s < n_subjects; s++) {
    if (o.full) { /* a long run says where it is */
      fprintf(stderr, "[%zu/%zu %.0f s] %s\n", s + 1, n_subjects, difftime(time(NULL), t0),
              tkb_registry_full_name(subjects[s]));
      fflush(stdout);
    }
    const tkb_benchmark_def *d = tkb_registry_get(subjects[s]);
    if (o.full) measure(&o, subjects[s], all_plans, LEN(all_plans));
    else if (strchr(d->name, '.')) measure(&o, subjects[s], variant_plans, LEN(variant_plans));
    else if (d->mode == TKB_MODE_FORWARD) measure(&o, subjects[s], light_plans, LEN(light_plans));
    else measure(&o, subjects[s], quick_plans, LEN(quick_plans));
  }
  print_table(&o);
  printf("(%.0f s)\n", difftime(time(NULL), t0));

  int planted = 0, missed = 0, alarms = 0;
  for (int r = 0; r < n_rows; r++) {
    for (int k = 0; k < N_KINDS; k++) {
      planted += rows[r].planted[k];
      missed += rows[r].required_missed[k];
    }
    alarms += rows[r].false_alarms;
  }
  CHECK_MSG(n_subjects > 0, "no entry of kind %s to measure", kind);
  CHECK_MSG(planted > 0, "nothing was planted");
  CHECK_MSG(missed == 0, "%d required plantings missed", missed);
  CHECK_MSG(alarms == 0, "%d false alarms", alarms);
  tkb_registry_clear();
  free_owned();
  return CHECK_DONE();
}
