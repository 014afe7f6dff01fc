/*
 * test_cpu_isa.c - the cpu kernels' instruction-set paths (src/core/cpu_isa.c): the
 * path tkb_cpu_isa names, switching between paths (a path this CPU cannot run is
 * refused, naming what it needs), and every path this CPU runs giving what the portable
 * path gives:
 *   - tkb_fill bit for bit: every dtype and kind of draw, sizes around the blocks'
 *     boundaries, on 1 and 2 threads (as across devices);
 *   - tkb_convert bit for bit: every dtype pair on random bit patterns;
 *   - normalization's bfloat16 y bit for bit with NaN, Inf, huge and denormal values
 *     (each path's vector rounding against the scalar one);
 *   - every cpu-tagged entry of the suite with a cpu implementation, in every mode,
 *     within its outputs' tkb_default_tolerance (the per-path kernels may add in another
 *     order: vector widths, tile sizes), each path standardized afresh with the same
 *     seed so that its prepare hook runs under it (TKB_TEST_QUICK leaves out
 *     forward_and_vjp, which is forward and vjp once more).
 * Paths with extensions (avx512 with AVX512-BF16) run with and without them.
 * TKB_TEST_PART=k/n (check.h) splits the suite's entries, and the fill, convert and
 * bfloat16 cases, into parts that CTest runs side by side.
 */
#include "tkbench.h"
#include "check.h"
#include "internal.h"
#include "fill_kernels.h"

#include <omp.h>
#include <stdint.h>

/* The paths this CPU runs, each with and without its extensions. */
typedef struct path {
  tkb__isa isa;
  bool extras;
} path;

static int paths_here(path out[2 * TKB__ISA_COUNT]) {
  int n = 0;
  for (int i = 0; i < TKB__ISA_COUNT; i++) {
    if (!tkb__isa_supported((tkb__isa)i)) continue;
    out[n++] = (path){(tkb__isa)i, true};
    if (i == TKB__ISA_AVX512) out[n++] = (path){(tkb__isa)i, false};
  }
  return n;
}

static const char *path_name(path p) {
  return p.isa == TKB__ISA_AVX512 && !p.extras ? "avx512 (no extensions)" : tkb__isa_name(p.isa);
}

static void use(path p) { CHECK_OK(tkb__cpu_isa_set(p.isa, p.extras)); }

static uint64_t fnv1a(const void *p, size_t n) {
  const unsigned char *b = p;
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

/* ------------------------------------------------------------------------------ */
/* Choosing and switching                                                          */
/* ------------------------------------------------------------------------------ */

static void test_choice(void) {
  const char *name = tkb_cpu_isa();
  CHECK(!strcmp(name, "portable") || !strcmp(name, "avx2") || !strcmp(name, "avx512") ||
        !strcmp(name, "neon"));
  CHECK(!strcmp(name, tkb__isa_name(tkb__cpu_isa())));
  CHECK(tkb__isa_supported(TKB__ISA_PORTABLE));
  /* with TKB_CPU_ISA unset the path is the best this CPU runs */
  const char *env = getenv("TKB_CPU_ISA");
  if (!env || !*env) {
    for (int i = tkb__cpu_isa() + 1; i < TKB__ISA_COUNT; i++)
      CHECK_MSG(!tkb__isa_supported((tkb__isa)i), "path %s chosen, %s supported", name,
                tkb__isa_name((tkb__isa)i));
    CHECK(tkb__cpu_isa_warning()[0] == '\0');
  }
  printf("  this CPU: %s (%s); paths it runs:", tkb__cpu_model(), name);
  for (int i = 0; i < TKB__ISA_COUNT; i++)
    if (tkb__isa_supported((tkb__isa)i)) printf(" %s", tkb__isa_name((tkb__isa)i));
  printf("\n");
  const tkb__isa was = tkb__cpu_isa();
  for (int i = 0; i < TKB__ISA_COUNT; i++) {
    if (tkb__isa_supported((tkb__isa)i)) {
      CHECK_OK(tkb__cpu_isa_set((tkb__isa)i, true));
      CHECK(tkb__cpu_isa() == (tkb__isa)i && !strcmp(tkb_cpu_isa(), tkb__isa_name((tkb__isa)i)));
    } else {
      CHECK_ERR(tkb__cpu_isa_set((tkb__isa)i, true), TKB_ERR_UNSUPPORTED, "needs");
      CHECK(tkb__cpu_isa() != (tkb__isa)i);
    }
  }
  CHECK_ERR(tkb__cpu_isa_set(TKB__ISA_COUNT, true), TKB_ERR_INVALID_ARGUMENT, "portable");
  CHECK_ERR(tkb__cpu_isa_set((tkb__isa)-1, true), TKB_ERR_INVALID_ARGUMENT, "portable");
  CHECK_OK(tkb__cpu_isa_set(TKB__ISA_PORTABLE, true));
  CHECK(!tkb__cpu_avx512bf16()); /* an avx512 extension only */
  CHECK_OK(tkb__cpu_isa_set(was, true));
}

/* ------------------------------------------------------------------------------ */
/* The fill and the conversions: bit for bit                                       */
/* ------------------------------------------------------------------------------ */

static void test_fill(path *paths, int np) {
  const int64_t sizes[] = {1, 7, 511, 512, 513, 1023, 1025, 4097, 70001, 200003};
  const struct {
    tkb_dtype dt;
    tkb_init init;
  } cases[] = {
      {TKB_FLOAT32, {0}},
      {TKB_FLOAT32, TKB_INIT_NORMAL_(0.25, 3.0)},
      {TKB_FLOAT32, TKB_INIT_UNIFORM_(-2, 3)},
      {TKB_FLOAT64, {0}},
      {TKB_FLOAT64, TKB_INIT_NORMAL_(-1, 0.5)},
      {TKB_FLOAT64, TKB_INIT_UNIFORM_(-2, 3)},
      {TKB_BFLOAT16, {0}},
      {TKB_BFLOAT16, TKB_INIT_NORMAL_(1, 2)},
      {TKB_BFLOAT16, TKB_INIT_UNIFORM_(-1, 1)},
      {TKB_FLOAT16, {0}},
      {TKB_FLOAT16, TKB_INIT_NORMAL_(1, 2)},
      {TKB_FLOAT8_E4M3FN, {0}},
      {TKB_FLOAT8_E5M2, TKB_INIT_NORMAL_(0.5, 4)},
      {TKB_INT8, {0}},
      {TKB_INT32, TKB_INIT_RANGE_(-1000, 1000)},
      {TKB_INT64, TKB_INIT_RANGE_(-1e15, 1e15)},
      {TKB_UINT8, TKB_INIT_UNIFORM_(0, 256)},
      {TKB_BOOL, {0}},
  };
  int same = 0, differ = 0;
  const int threads = omp_get_max_threads();
  for (size_t c = 0; c < TKB_ARRAY_LEN(cases); c++)
    for (size_t s = 0; s < TKB_ARRAY_LEN(sizes); s++) {
      const tkb_spec spec = TKB_SPEC(cases[c].dt, sizes[s]);
      tkb_array *a = NULL;
      CHECK_OK(tkb_array_new(NULL, &spec, &a));
      if (!a) continue;
      uint64_t want = 0;
      for (int k = 0; k < np; k++)
        for (int t = 1; t <= 2; t++) {
          use(paths[k]);
          omp_set_num_threads(t);
          CHECK_OK(tkb_fill(a, &cases[c].init, 0x5eed + s, 3));
          const uint64_t h = fnv1a(a->data, a->nbytes);
          if (k == 0 && t == 1) want = h;
          if (h == want) {
            same++;
          } else {
            differ++;
            CHECK_MSG(h == want, "fill %s[%lld] case %zu: path %s, %d thread(s) differs from "
                      "portable", tkb_dtype_name(cases[c].dt), (long long)sizes[s], c,
                      path_name(paths[k]), t);
          }
        }
      tkb_array_free(a);
    }
  omp_set_num_threads(threads);
  printf("  fill: %d fills bit-identical to portable's, %d differ\n", same, differ);
}

/* The float32 block generators at counters no array of this machine's memory reaches
 * (its fills start at counter 0): blocks whose counters' high word is not 0, and the
 * blocks on either side of 2^32, where the per-block constants of Philox's first rounds
 * (fill_kernels.h's fill_px_head: the high word is one per block) change, and blocks
 * that do not start at a multiple of NB, one of them across 2^32 (full rounds there).
 * Each path's block against portable's, bit for bit, and the uniform draw's (its words
 * as they are) against philox.h's scalar Philox, so that portable's block is checked
 * too. */
static void test_fill_high_counters(void) {
  const uint64_t c0s[] = {0, (1ull << 32) - NB, 1ull << 32, (1ull << 32) + 5 * NB,
                          (0x123456789ull << 7), UINT64_MAX - NB + 1, 77,
                          (1ull << 32) - 3, (3ull << 32) - NB - 1, UINT64_MAX - NB + 1 - 9};
  const tkb_init inits[] = {{0}, TKB_INIT_NORMAL_(0.25, 3.0), TKB_INIT_UNIFORM_(-2, 3)};
  const tkb_spec spec = TKB_SPEC(TKB_FLOAT32, 4 * NB);
  tkb_array *a = NULL;
  CHECK_OK(tkb_array_new(NULL, &spec, &a));
  if (!a) return;
  int same = 0, differ = 0;
  _Alignas(64) float want[4 * NB], got[4 * NB];
  for (size_t i = 0; i < TKB_ARRAY_LEN(inits); i++) {
    fill_plan p;
    CHECK_OK(tkb__make_fill_plan(a, &inits[i], 0x5eed + i, 3 + i, &p));
    for (size_t c = 0; c < TKB_ARRAY_LEN(c0s); c++) {
      TKB_ISA_PICK(tkb__fill_kernels, TKB__ISA_PORTABLE)->f32(&p, c0s[c], want);
      if (inits[i].kind == TKB_INIT_UNIFORM) {
        bool ok = true;
        for (int j = 0; j < NB; j++) {
          const uint64_t ctr = c0s[c] + (uint64_t)j;
          const tkb_px_u32x4 x = tkb_px_philox(
              (tkb_px_u32x4){(tkb_px_u32)ctr, (tkb_px_u32)(ctr >> 32), p.s0, p.s1}, p.k0, p.k1);
          const tkb_px_u32 xs[4] = {x.x0, x.x1, x.x2, x.x3};
          for (int k = 0; k < 4; k++) {
            const float v = tkb_px_lerp_clampf(tkb_px_u01f(xs[k]), p.lo_f, p.hi_f, p.mn_f, p.mx_f);
            ok = ok && memcmp(&v, &want[4 * j + k], sizeof v) == 0;
          }
        }
        ok ? same++ : differ++;
        CHECK_MSG(ok, "f32 uniform block at counter %#llx: portable differs from tkb_px_philox",
                  (unsigned long long)c0s[c]);
      }
      for (int isa = 0; isa < TKB__ISA_COUNT; isa++) {
        if (!tkb__isa_supported((tkb__isa)isa) || isa == TKB__ISA_PORTABLE) continue;
        TKB_ISA_PICK(tkb__fill_kernels, (tkb__isa)isa)->f32(&p, c0s[c], got);
        const bool ok = memcmp(got, want, sizeof want) == 0;
        ok ? same++ : differ++;
        CHECK_MSG(ok, "f32 block at counter %#llx, init %zu: path %s differs from portable",
                  (unsigned long long)c0s[c], i, tkb__isa_name((tkb__isa)isa));
      }
    }
  }
  tkb_array_free(a);
  printf("  fill blocks at high counters: %d bit-identical to portable's, %d differ\n", same,
         differ);
}

static void test_convert(path *paths, int np) {
  const size_t n = 4099; /* not a multiple of any vector width */
  uint8_t *src = malloc(n * 8), *dst = malloc(n * 8), *want = malloc(n * 8);
  CHECK(src && dst && want);
  if (!src || !dst || !want) return;
  uint64_t x = 0x9e3779b97f4a7c15ull;
  for (size_t i = 0; i < n * 8; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    src[i] = (uint8_t)x;
  }
  int pairs = 0;
  for (int from = 0; from < TKB_DTYPE_COUNT; from++)
    for (int to = 0; to < TKB_DTYPE_COUNT; to++) {
      const size_t bytes = n * tkb_dtype_size((tkb_dtype)to);
      for (int k = 0; k < np; k++) {
        use(paths[k]);
        memset(dst, 0xa5, n * 8);
        CHECK_OK(tkb_convert(src, (tkb_dtype)from, dst, (tkb_dtype)to, n));
        if (k == 0) memcpy(want, dst, bytes);
        else
          CHECK_MSG(!memcmp(dst, want, bytes), "convert %s -> %s: path %s differs from portable",
                    tkb_dtype_name((tkb_dtype)from), tkb_dtype_name((tkb_dtype)to),
                    path_name(paths[k]));
      }
      pairs++;
    }
  printf("  tkb_convert: %d dtype pairs on %zu random elements, every path bit-identical\n",
         pairs, n);
  free(src);
  free(dst);
  free(want);
}

/* ------------------------------------------------------------------------------ */
/* bfloat16 outputs of special values: the vector roundings against the scalar one  */
/* ------------------------------------------------------------------------------ */

/* normalization's forward on bfloat16 x holding NaN, Inf, huge and tiny values (rows
 * and lanes, the streamed axis-0 items among them): every path rounds y as
 * tkb_cvt_f32_to_bf16 does, NaN's quiet NaN and denormals included, so the bytes match. */
/* Index of the first bfloat16 element of a and b (n each) that differs, NaNs of any sign
 * or payload counting as equal (the paths may propagate either operand's NaN); -1 when
 * none does. */
static int64_t bf16_first_difference(const uint16_t *a, const uint16_t *b, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    const bool nan_a = (a[i] & 0x7fff) > 0x7f80, nan_b = (b[i] & 0x7fff) > 0x7f80;
    if (nan_a && nan_b) continue;
    if (a[i] != b[i]) return i;
  }
  return -1;
}

static void test_bf16_specials(path *paths, int np) {
  extern const tkb_fn tkb_op_normalization;
  const struct {
    tkb_spec x;
    int64_t axis;
  } cases[] = {{TKB_SPEC(TKB_BFLOAT16, 50, 128), -1},
               {TKB_SPEC(TKB_BFLOAT16, 7, 33), -1},
               {TKB_SPEC(TKB_BFLOAT16, 24, 300), 0},
               {TKB_SPEC(TKB_BFLOAT16, 64, 8, 96), 0},
               {TKB_SPEC(TKB_BFLOAT16, 3, 20, 70), 1}};
  const float specials[] = {NAN, -NAN, INFINITY, -INFINITY, 3e38f, -3e38f, 1e-38f, 0.0f};
  int compared = 0;
  for (size_t c = 0; c < TKB_ARRAY_LEN(cases); c++) {
    const int ax = (int)(cases[c].axis < 0 ? cases[c].axis + cases[c].x.rank : cases[c].axis);
    const tkb_spec param = TKB_SPEC(TKB_FLOAT32, cases[c].x.shape[ax]);
    tkb_value v[3] = {TKB_ABSTRACT(cases[c].x), TKB_ABSTRACT(param), TKB_ABSTRACT(param)};
    tkb_kwarg kw[1] = {{"axis", TKB_INT(cases[c].axis)}};
    tkb_array *want = NULL;
    for (int k = 0; k < np; k++) {
      use(paths[k]);
      tkb_std_opts o = {.mode = TKB_MODE_FORWARD, .seed = 5};
      tkb_std_fn *f = NULL;
      tkb_arrays *args = NULL, *outs = NULL;
      CHECK_OK(tkb_standardize_function(&tkb_op_normalization, v, 3, kw, 1, &o, &f, &args));
      if (!f) continue;
      /* special values every 37th element; a tiny scale makes some outputs denormal */
      tkb_array *x = tkb_arrays_get(args, 0), *scale = tkb_arrays_get(args, 1);
      for (int64_t i = 0; i < x->numel; i += 37)
        tkb_array_set_f64(x, i, specials[(i / 37) % TKB_ARRAY_LEN(specials)]);
      tkb_array_set_f64(scale, 0, 1e-39);
      CHECK_OK(tkb_std_fn_call(f, args, &outs));
      const tkb_array *y = outs ? tkb_arrays_get(outs, 0) : NULL;
      if (y && k == 0) {
        CHECK_OK(tkb_array_new(NULL, &y->spec, &want));
        if (want) CHECK_OK(tkb_array_copy_into(want, y));
      } else if (y && want) {
        const int64_t d = bf16_first_difference(y->data, want->data, y->numel);
        CHECK_MSG(d < 0,
                  "normalization bfloat16 case %zu: path %s's y differs from portable's at "
                  "element %lld (0x%04x, portable 0x%04x)", c, path_name(paths[k]), (long long)d,
                  d < 0 ? 0 : ((const uint16_t *)y->data)[d], d < 0 ? 0 : ((const uint16_t *)want->data)[d]);
        compared++;
      }
      tkb_std_fn_free(f);
      tkb_arrays_free(args);
    }
    tkb_array_free(want);
  }
  printf("  bfloat16 special values: %d normalization outputs of the other paths bit-identical (any NaN matching any NaN) "
         "to portable's\n", compared);
}

/* ------------------------------------------------------------------------------ */
/* The suite's cpu entries: within tolerance                                       */
/* ------------------------------------------------------------------------------ */

/* The entry's outputs under the current path (copies the caller frees). */
static tkb_arrays *run_entry(size_t i) {
  tkb_std_fn *f = NULL;
  tkb_arrays *args = NULL, *outs = NULL, *copy = NULL;
  CHECK_OK(tkb_registry_standardize(i, "cpu", 7, &f, &args));
  if (f) CHECK_OK(tkb_std_fn_call(f, args, &outs));
  if (outs) {
    CHECK_OK(tkb_arrays_new(&copy));
    for (size_t k = 0; copy && k < tkb_arrays_count(outs); k++) {
      const tkb_array *o = tkb_arrays_get(outs, k);
      tkb_array *c = NULL;
      CHECK_OK(tkb_array_new(NULL, &o->spec, &c));
      if (c) CHECK_OK(tkb_array_copy_into(c, o));
      CHECK_OK(tkb_arrays_push(copy, c, tkb_arrays_name(outs, k)));
    }
  }
  tkb_std_fn_free(f);
  tkb_arrays_free(args);
  return copy;
}

/* Largest finite |x| of a (what tkb_default_tolerance's atol is relative to). */
static double max_abs(const tkb_array *a) {
  double m = 0;
  for (int64_t i = 0; i < a->numel; i++) {
    const double v = fabs(tkb_array_get_f64(a, i));
    if (isfinite(v) && v > m) m = v;
  }
  return m;
}

static void test_entries(path *paths, int np) {
  CHECK_OK(tkb_register_builtin_ops());
  int entries = 0, outputs = 0, identical = 0, seen = 0;
  for (size_t i = 0; i < tkb_registry_count(); i++) {
    const tkb_benchmark_def *d = tkb_registry_get(i);
    if (!tkb_registry_has_tag(i, "cpu") || strcmp(d->impl_name, "cpu") != 0) continue;
    /* the sanitizer run: forward_and_vjp is forward and vjp once more */
    if (check_quick() && d->mode == TKB_MODE_FORWARD_AND_VJP) continue;
    if (!check_part_takes((size_t)seen++)) continue; /* another part's */
    use(paths[0]);
    tkb_arrays *want = run_entry(i);
    if (!want) continue;
    entries++;
    for (int k = 1; k < np; k++) {
      use(paths[k]);
      tkb_arrays *got = run_entry(i);
      if (!got) continue;
      CHECK(tkb_arrays_count(got) == tkb_arrays_count(want));
      for (size_t o = 0; o < tkb_arrays_count(got) && o < tkb_arrays_count(want); o++) {
        const tkb_array *g = tkb_arrays_get(got, o), *e = tkb_arrays_get(want, o);
        double rtol = 0, atol = 0;
        CHECK_OK(tkb_default_tolerance(e->spec.dtype, &rtol, &atol));
        const double scale = max_abs(e);
        tkb_diff_summary ds;
        CHECK_OK(tkb_array_diff_summary(g, e, rtol, atol * (scale > 0 ? scale : 1), &ds));
        CHECK_MSG(ds.allclose, "%s output %s: path %s against portable: %.2f%% close, max "
                  "|diff| %.3g at %lld (%.9g against %.9g), rtol %g atol %g",
                  tkb_registry_full_name(i), tkb_arrays_name(got, o), path_name(paths[k]),
                  ds.percent_close, ds.max_abs_diff, (long long)ds.max_abs_diff_index,
                  ds.max_diff_actual, ds.max_diff_expected, ds.rtol, ds.atol);
        outputs++;
        if (g->nbytes == e->nbytes && !memcmp(g->data, e->data, g->nbytes)) identical++;
      }
      tkb_arrays_free(got);
    }
    tkb_arrays_free(want);
  }
  CHECK(entries > 0);
  printf("  suite: %d cpu entries; %d outputs of the other paths compared with portable's, "
         "%d of them bit-identical, all within tolerance unless reported above\n",
         entries, outputs, identical);
}

int main(void) {
  path paths[2 * TKB__ISA_COUNT];
  const int np = paths_here(paths);
  const tkb__isa start = tkb__cpu_isa();
  test_choice();
  /* each in one part (every one when the test is not split) */
  if (check_part_takes(0)) test_fill(paths, np);
  if (check_part_takes(0)) test_fill_high_counters();
  if (check_part_takes(1)) test_convert(paths, np);
  if (check_part_takes(2)) test_bf16_specials(paths, np);
  test_entries(paths, np);
  CHECK_OK(tkb__cpu_isa_set(start, true));
  return CHECK_DONE();
}
