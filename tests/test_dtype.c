/*
 * test_dtype.c - dtype names, parsing and sizes; the narrow float conversions checked
 * bit for bit against numpy/ml_dtypes (tests/golden/dtype_golden.h) over every input;
 * tkb_convert over every (from, to) pair.
 *
 * float32 -> narrow is swept over all 2^32 inputs (hashed as gen_dtype_golden.py
 * describes); with TKB_TEST_QUICK=1, and in unoptimized builds, only every 1021st.
 */
#include "tkbench.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "golden/dtype_golden.h"

#define LEN(a) (sizeof(a) / sizeof((a)[0]))

static uint32_t f2u(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

static float u2f(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t fnv1a_byte(uint64_t h, uint8_t b) { return (h ^ b) * GOLDEN_FNV_PRIME; }

static uint64_t fnv1a_le(uint64_t h, uint64_t v, int nbytes) {
  for (int i = 0; i < nbytes; i++) h = fnv1a_byte(h, (uint8_t)(v >> (8 * i)));
  return h;
}

static inline uint64_t mix(uint64_t h, uint64_t w) {
  h = (h ^ w) * GOLDEN_MIX_K;
  return h ^ (h >> 32);
}

/* ------------------------------------------------------------------------------ */
/* names, parsing, sizes                                                          */
/* ------------------------------------------------------------------------------ */

static const char *const expected_names[TKB_DTYPE_COUNT] = {
    "bool",          "int8",        "int16",   "int32",    "int64",   "uint8",
    "float8_e4m3fn", "float8_e5m2", "float16", "bfloat16", "float32", "float64"};
static const size_t expected_sizes[TKB_DTYPE_COUNT] = {1, 1, 2, 4, 8, 1, 1, 1, 2, 2, 4, 8};

static void test_names(void) {
  for (int d = 0; d < TKB_DTYPE_COUNT; d++) {
    const char *name = tkb_dtype_name((tkb_dtype)d);
    CHECK_MSG(strcmp(name, expected_names[d]) == 0, "dtype %d is \"%s\"", d, name);
    tkb_dtype got = TKB_DTYPE_COUNT;
    CHECK_OK(tkb_dtype_parse(name, &got));
    CHECK(got == (tkb_dtype)d);
    CHECK(tkb_dtype_size((tkb_dtype)d) == expected_sizes[d]);
    bool fl = d >= TKB_FLOAT8_E4M3FN, in = d >= TKB_INT8 && d <= TKB_UINT8;
    CHECK_MSG(tkb_dtype_is_float((tkb_dtype)d) == fl, "%s", name);
    CHECK_MSG(tkb_dtype_is_int((tkb_dtype)d) == in, "%s", name);
  }
  CHECK(!tkb_dtype_is_float(TKB_BOOL) && !tkb_dtype_is_int(TKB_BOOL));

  static const struct {
    const char *alias;
    tkb_dtype dt;
  } aliases[] = {{"bf16", TKB_BFLOAT16}, {"f16", TKB_FLOAT16}, {"f32", TKB_FLOAT32},
                 {"f64", TKB_FLOAT64},   {"i8", TKB_INT8},     {"i16", TKB_INT16},
                 {"i32", TKB_INT32},     {"i64", TKB_INT64},   {"u8", TKB_UINT8}};
  for (size_t i = 0; i < LEN(aliases); i++) {
    tkb_dtype got = TKB_DTYPE_COUNT;
    CHECK_OK(tkb_dtype_parse(aliases[i].alias, &got));
    CHECK_MSG(got == aliases[i].dt, "%s", aliases[i].alias);
  }

  /* Out-of-range enum values. */
  const int bad[] = {-1, TKB_DTYPE_COUNT, 100, -1000};
  for (size_t i = 0; i < LEN(bad); i++) {
    tkb_dtype d = (tkb_dtype)bad[i];
    CHECK(strcmp(tkb_dtype_name(d), "invalid") == 0);
    CHECK(tkb_dtype_size(d) == 0);
    CHECK(!tkb_dtype_is_float(d) && !tkb_dtype_is_int(d));
  }

  /* Parse errors: exact and case-sensitive; the message names the string and lists
     every spelling; out is not written. */
  const char *wrong[] = {"flot32", "Float32", "float32 ", " float32", "", "bfloat", "int",
                         "F32", "float8", "e4m3fn", "bool_", "uint16", "float32\n"};
  for (size_t i = 0; i < LEN(wrong); i++) {
    tkb_dtype got = TKB_INT16;
    char quoted[80];
    snprintf(quoted, sizeof quoted, "dtype \"%s\" is not a dtype", wrong[i]);
    CHECK_ERR(tkb_dtype_parse(wrong[i], &got), TKB_ERR_NOT_FOUND, quoted);
    CHECK(got == TKB_INT16);
  }
  CHECK_ERR(tkb_dtype_parse("flot32", &(tkb_dtype){0}), TKB_ERR_NOT_FOUND,
            "expected one of: bool, int8, ");
  const char *msg = tkb_last_error();
  for (int d = 0; d < TKB_DTYPE_COUNT; d++)
    CHECK_MSG(strstr(msg, expected_names[d]) != NULL, "message lacks %s", expected_names[d]);
  for (size_t i = 0; i < LEN(aliases); i++)
    CHECK_MSG(strstr(msg, aliases[i].alias) != NULL, "message lacks %s", aliases[i].alias);

  char longname[300];
  memset(longname, 'x', sizeof longname - 1);
  longname[sizeof longname - 1] = '\0';
  CHECK_ERR(tkb_dtype_parse(longname, &(tkb_dtype){0}), TKB_ERR_NOT_FOUND, "xxx...\" is not");
  CHECK(strstr(tkb_last_error(), "float64") != NULL);

  CHECK_ERR(tkb_dtype_parse(NULL, &(tkb_dtype){0}), TKB_ERR_INVALID_ARGUMENT, "name is NULL");
  CHECK_ERR(tkb_dtype_parse("float32", NULL), TKB_ERR_INVALID_ARGUMENT, "out is NULL");
  tkb_dtype got;
  CHECK_OK(tkb_dtype_parse("bfloat16", &got));
  CHECK(strcmp(tkb_last_error(), "") == 0);
}

/* ------------------------------------------------------------------------------ */
/* narrow -> float32: every pattern                                               */
/* ------------------------------------------------------------------------------ */

static void test_8bit_tables(void) {
  uint8_t pat[256];
  float conv[256];
  for (int i = 0; i < 256; i++) pat[i] = (uint8_t)i;
  int bad = 0;
  for (int i = 0; i < 256; i++) {
    uint32_t a = f2u(tkb_e4m3fn_to_f32((uint8_t)i)), b = f2u(tkb_e5m2_to_f32((uint8_t)i));
    if (a != golden_e4m3fn_to_f32[i] && bad++ < 10)
      fprintf(stderr, "e4m3fn 0x%02x -> 0x%08x, ml_dtypes 0x%08x\n", i, a,
              golden_e4m3fn_to_f32[i]);
    if (b != golden_e5m2_to_f32[i] && bad++ < 10)
      fprintf(stderr, "e5m2 0x%02x -> 0x%08x, ml_dtypes 0x%08x\n", i, b, golden_e5m2_to_f32[i]);
  }
  CHECK_MSG(bad == 0, "%d float8 -> float32 mismatches", bad);

  CHECK_OK(tkb_convert(pat, TKB_FLOAT8_E4M3FN, conv, TKB_FLOAT32, 256));
  bad = 0;
  for (int i = 0; i < 256; i++) bad += f2u(conv[i]) != golden_e4m3fn_to_f32[i];
  CHECK_MSG(bad == 0, "tkb_convert e4m3fn -> f32: %d mismatches", bad);
  CHECK_OK(tkb_convert(pat, TKB_FLOAT8_E5M2, conv, TKB_FLOAT32, 256));
  bad = 0;
  for (int i = 0; i < 256; i++) bad += f2u(conv[i]) != golden_e5m2_to_f32[i];
  CHECK_MSG(bad == 0, "tkb_convert e5m2 -> f32: %d mismatches", bad);
}

static void test_16bit_tables(void) {
  static uint16_t pat[65536];
  static float conv[65536];
  for (uint32_t i = 0; i < 65536; i++) pat[i] = (uint16_t)i;
  for (int which = 0; which < 2; which++) {
    const char *name = which ? "bf16" : "f16";
    float (*fn)(uint16_t) = which ? tkb_bf16_to_f32 : tkb_f16_to_f32;
    uint64_t want = which ? GOLDEN_BF16_TO_F32_FNV : GOLDEN_F16_TO_F32_FNV;
    const uint32_t *spot = which ? golden_bf16_to_f32_spot : golden_f16_to_f32_spot;
    uint64_t h = GOLDEN_FNV_OFFSET;
    for (uint32_t i = 0; i < 65536; i++) h = fnv1a_le(h, f2u(fn((uint16_t)i)), 4);
    CHECK_MSG(h == want, "%s -> f32 table hash 0x%016llx, golden 0x%016llx", name,
              (unsigned long long)h, (unsigned long long)want);
    int bad = 0;
    for (size_t i = 0; i < LEN(golden_spot16_in); i++) {
      uint32_t got = f2u(fn(golden_spot16_in[i]));
      if (got != spot[i] && bad++ < 10)
        fprintf(stderr, "%s 0x%04x -> 0x%08x, golden 0x%08x\n", name, golden_spot16_in[i],
                got, spot[i]);
    }
    CHECK_MSG(bad == 0, "%s -> f32: %d spot mismatches", name, bad);

    CHECK_OK(tkb_convert(pat, which ? TKB_BFLOAT16 : TKB_FLOAT16, conv, TKB_FLOAT32, 65536));
    bad = 0;
    for (uint32_t i = 0; i < 65536; i++) bad += f2u(conv[i]) != f2u(fn((uint16_t)i));
    CHECK_MSG(bad == 0, "tkb_convert %s -> f32 differs from the scalar in %d", name, bad);
  }
}

/* ------------------------------------------------------------------------------ */
/* float32 -> narrow                                                              */
/* ------------------------------------------------------------------------------ */

static const char *const narrow_names[4] = {"float16", "bfloat16", "float8_e4m3fn",
                                            "float8_e5m2"};

static void test_spot32(void) {
  size_t n = LEN(golden_spot32_in);
  float *in = malloc(n * sizeof *in);
  uint16_t *o16 = malloc(n * 2), *obf = malloc(n * 2);
  uint8_t *o43 = malloc(n), *o52 = malloc(n);
  for (size_t i = 0; i < n; i++) in[i] = u2f(golden_spot32_in[i]);
  int bad = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned got[4] = {tkb_f32_to_f16(in[i]), tkb_f32_to_bf16(in[i]),
                       tkb_f32_to_e4m3fn(in[i]), tkb_f32_to_e5m2(in[i])};
    unsigned want[4] = {golden_spot32_to_f16[i], golden_spot32_to_bf16[i],
                        golden_spot32_to_e4m3fn[i], golden_spot32_to_e5m2[i]};
    for (int t = 0; t < 4; t++)
      if (got[t] != want[t] && bad++ < 20)
        fprintf(stderr, "f32 0x%08x (%.9g) -> %s 0x%x, golden 0x%x\n", golden_spot32_in[i],
                (double)in[i], narrow_names[t], got[t], want[t]);
  }
  CHECK_MSG(bad == 0, "%d spot float32 -> narrow mismatches", bad);

  CHECK_OK(tkb_convert(in, TKB_FLOAT32, o16, TKB_FLOAT16, n));
  CHECK_OK(tkb_convert(in, TKB_FLOAT32, obf, TKB_BFLOAT16, n));
  CHECK_OK(tkb_convert(in, TKB_FLOAT32, o43, TKB_FLOAT8_E4M3FN, n));
  CHECK_OK(tkb_convert(in, TKB_FLOAT32, o52, TKB_FLOAT8_E5M2, n));
  bad = 0;
  for (size_t i = 0; i < n; i++)
    bad += (o16[i] != golden_spot32_to_f16[i]) + (obf[i] != golden_spot32_to_bf16[i]) +
           (o43[i] != golden_spot32_to_e4m3fn[i]) + (o52[i] != golden_spot32_to_e5m2[i]);
  CHECK_MSG(bad == 0, "%d spot tkb_convert float32 -> narrow mismatches", bad);
  free(in), free(o16), free(obf), free(o43), free(o52);
}

/* A few behaviours spelled out, so a failure reads as more than a hash. */
static void test_f32_to_narrow_cases(void) {
  const float inf = INFINITY, nan = NAN;
  /* float16 (numpy) */
  CHECK(tkb_f32_to_f16(65504.0f) == 0x7bff);
  CHECK(tkb_f32_to_f16(65519.99f) == 0x7bff);
  CHECK(tkb_f32_to_f16(65520.0f) == 0x7c00);   /* tie past the max rounds to Inf */
  CHECK(tkb_f32_to_f16(-1e10f) == 0xfc00);
  CHECK(tkb_f32_to_f16(-inf) == 0xfc00);
  CHECK(tkb_f32_to_f16(0x1p-24f) == 0x0001);   /* smallest subnormal */
  CHECK(tkb_f32_to_f16(0x1p-25f) == 0x0000);   /* tie to even: 0 */
  CHECK(tkb_f32_to_f16(0x1.8p-24f) == 0x0002); /* tie to even: 2 */
  CHECK(tkb_f32_to_f16(-0.0f) == 0x8000);
  CHECK(tkb_f32_to_f16(1.0f + 0x1p-11f) == 0x3c00);
  CHECK(tkb_f32_to_f16(1.0f + 0x1.8p-10f) == 0x3c02);
  CHECK(tkb_f32_to_f16(u2f(0x7f800001)) == 0x7c01); /* payload gone: kept a NaN */
  CHECK(tkb_f32_to_f16(u2f(0x7fd12345)) == 0x7e89); /* top payload bits kept */
  CHECK(tkb_f32_to_f16(u2f(0xffc00000)) == 0xfe00);
  /* bfloat16 */
  CHECK(tkb_f32_to_bf16(1.0f) == 0x3f80);
  CHECK(tkb_f32_to_bf16(u2f(0x3f808000)) == 0x3f80); /* tie to even */
  CHECK(tkb_f32_to_bf16(u2f(0x3f818000)) == 0x3f82);
  CHECK(tkb_f32_to_bf16(FLT_MAX) == 0x7f80);
  CHECK(tkb_f32_to_bf16(u2f(0x00018000)) == 0x0002); /* float32 subnormals kept */
  CHECK(tkb_f32_to_bf16(u2f(0x7f800001)) == 0x7fc0);
  CHECK(tkb_f32_to_bf16(-nan) == 0xffc0);
  /* float8_e4m3fn: no Inf; overflow and Inf are NaN with the sign */
  CHECK(tkb_f32_to_e4m3fn(448.0f) == 0x7e);
  CHECK(tkb_f32_to_e4m3fn(464.0f) == 0x7e);   /* tie rounds to even 448 */
  CHECK(tkb_f32_to_e4m3fn(464.1f) == 0x7f);   /* past it: NaN */
  CHECK(tkb_f32_to_e4m3fn(-1e6f) == 0xff);
  CHECK(tkb_f32_to_e4m3fn(inf) == 0x7f);
  CHECK(tkb_f32_to_e4m3fn(-inf) == 0xff);
  CHECK(tkb_f32_to_e4m3fn(nan) == 0x7f);
  CHECK(tkb_f32_to_e4m3fn(-nan) == 0xff);
  CHECK(tkb_f32_to_e4m3fn(0x1p-9f) == 0x01);
  CHECK(tkb_f32_to_e4m3fn(0x1p-10f) == 0x00);
  CHECK(tkb_f32_to_e4m3fn(-0x1.8p-10f) == 0x81);
  CHECK(tkb_f32_to_e4m3fn(0x1.ep-7f) == 0x08); /* rounds up into the normals */
  /* float8_e5m2 */
  CHECK(tkb_f32_to_e5m2(57344.0f) == 0x7b);
  CHECK(tkb_f32_to_e5m2(61439.0f) == 0x7b);
  CHECK(tkb_f32_to_e5m2(61440.0f) == 0x7c); /* tie past the max: Inf */
  CHECK(tkb_f32_to_e5m2(-inf) == 0xfc);
  CHECK(tkb_f32_to_e5m2(nan) == 0x7e);
  CHECK(tkb_f32_to_e5m2(-nan) == 0xfe);
  CHECK(tkb_f32_to_e5m2(0x1p-16f) == 0x01);
  /* narrow -> f32 */
  CHECK(f2u(tkb_e4m3fn_to_f32(0x7f)) == 0x7fc00000u);
  CHECK(f2u(tkb_e4m3fn_to_f32(0xff)) == 0xffc00000u);
  CHECK(tkb_e4m3fn_to_f32(0x7e) == 448.0f);
  CHECK(tkb_e4m3fn_to_f32(0x01) == 0x1p-9f);
  CHECK(f2u(tkb_e5m2_to_f32(0x7d)) == 0x7fc00000u);
  CHECK(tkb_e5m2_to_f32(0xfc) == -inf);
  CHECK(f2u(tkb_f16_to_f32(0x7c01)) == 0x7f802000u);
  CHECK(tkb_f16_to_f32(0x0001) == 0x1p-24f);
  CHECK(f2u(tkb_bf16_to_f32(0xff81)) == 0xff810000u);
}

/*
 * The sweep hash of gen_dtype_golden.py over tkb_convert's outputs: inputs
 * uint32(k * stride), chunks of GOLDEN_CHUNK consecutive k hashed on their own (in
 * parallel), then the chunk hashes in order. out[4]: float16, bfloat16, e4m3fn, e5m2.
 * Every `scalar_every`-th chunk also runs the scalar functions and compares them with
 * tkb_convert element by element. Returns failed tkb_convert calls plus mismatches.
 *
 * A thread hashes GROUP chunks side by side so that their multiply chains overlap (one
 * chain alone is latency-bound); chunks past the end are computed and dropped.
 */
enum { SUB = 1024, GROUP = 4 };

/* 8 little-endian bytes from p as a 64-bit word. */
static inline uint64_t le64(const void *p) {
  uint64_t w;
  memcpy(&w, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  w = __builtin_bswap64(w);
#endif
  return w;
}

static inline uint64_t le64_u16(const uint16_t *p) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  return p[0] | (uint64_t)p[1] << 16 | (uint64_t)p[2] << 32 | (uint64_t)p[3] << 48;
#else
  return le64(p);
#endif
}

static int64_t sweep(uint32_t stride, uint32_t chunks, uint32_t scalar_every, uint64_t out[4]) {
  uint64_t *ch = malloc(sizeof *ch * 4 * (size_t)chunks);
  if (!ch) return 1;
  int64_t failures = 0;
  int64_t groups = ((int64_t)chunks + GROUP - 1) / GROUP;
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : failures)
#endif
  for (int64_t g = 0; g < groups; g++) {
    float in[GROUP][SUB];
    uint16_t o16[GROUP][SUB], obf[GROUP][SUB];
    uint8_t o43[GROUP][SUB], o52[GROUP][SUB];
    uint64_t h[GROUP][4];
    for (int j = 0; j < GROUP; j++)
      for (int t = 0; t < 4; t++) h[j][t] = GOLDEN_FNV_OFFSET;
    for (uint32_t s0 = 0; s0 < GOLDEN_CHUNK; s0 += SUB) {
      for (int j = 0; j < GROUP; j++) {
        int64_t c = g * GROUP + j;
        uint32_t k0 = (uint32_t)c * GOLDEN_CHUNK + s0;
        for (uint32_t i = 0; i < SUB; i++) in[j][i] = u2f((k0 + i) * stride);
        failures += tkb_convert(in[j], TKB_FLOAT32, o16[j], TKB_FLOAT16, SUB) != TKB_OK;
        failures += tkb_convert(in[j], TKB_FLOAT32, obf[j], TKB_BFLOAT16, SUB) != TKB_OK;
        failures += tkb_convert(in[j], TKB_FLOAT32, o43[j], TKB_FLOAT8_E4M3FN, SUB) != TKB_OK;
        failures += tkb_convert(in[j], TKB_FLOAT32, o52[j], TKB_FLOAT8_E5M2, SUB) != TKB_OK;
        if (c < (int64_t)chunks && c % scalar_every == 0) {
          for (int i = 0; i < SUB; i++) {
            failures += tkb_f32_to_f16(in[j][i]) != o16[j][i];
            failures += tkb_f32_to_bf16(in[j][i]) != obf[j][i];
            failures += tkb_f32_to_e4m3fn(in[j][i]) != o43[j][i];
            failures += tkb_f32_to_e5m2(in[j][i]) != o52[j][i];
          }
        }
      }
      for (int w = 0; w < SUB / 4; w++)
        for (int j = 0; j < GROUP; j++) {
          h[j][0] = mix(h[j][0], le64_u16(o16[j] + 4 * w));
          h[j][1] = mix(h[j][1], le64_u16(obf[j] + 4 * w));
        }
      for (int w = 0; w < SUB / 8; w++)
        for (int j = 0; j < GROUP; j++) {
          h[j][2] = mix(h[j][2], le64(o43[j] + 8 * w));
          h[j][3] = mix(h[j][3], le64(o52[j] + 8 * w));
        }
    }
    for (int j = 0; j < GROUP; j++)
      if (g * GROUP + j < (int64_t)chunks)
        for (int t = 0; t < 4; t++) ch[4 * (g * GROUP + j) + t] = h[j][t];
  }
  for (int t = 0; t < 4; t++) {
    uint64_t h = GOLDEN_FNV_OFFSET;
    for (uint32_t c = 0; c < chunks; c++) h = fnv1a_le(h, ch[4 * (size_t)c + t], 8);
    out[t] = h;
  }
  free(ch);
  return failures;
}

/* The full sweep takes minutes unoptimized (Debug), so such builds sweep the stride. */
static int sweep_quick(void) {
#ifdef __OPTIMIZE__
  return check_quick();
#else
  return 1;
#endif
}

static void test_sweeps(void) {
  int quick = sweep_quick();
  uint32_t stride = quick ? GOLDEN_QUICK_STRIDE : GOLDEN_FULL_STRIDE;
  uint32_t chunks = quick ? GOLDEN_QUICK_CHUNKS : GOLDEN_FULL_CHUNKS;
  const uint64_t *want = quick ? golden_sweep_quick : golden_sweep_full;
  /* The scalar functions share their code with tkb_convert's loops: checking them on
     about 44 million inputs (every input in quick mode) is plenty. */
  uint32_t scalar_every = quick ? 1 : 97;
  uint64_t got[4];
  double t0 = now_s();
  int64_t failures = sweep(stride, chunks, scalar_every, got);
  CHECK_MSG(failures == 0, "sweep: %lld failed calls or scalar/tkb_convert mismatches",
            (long long)failures);
  for (int t = 0; t < 4; t++)
    CHECK_MSG(got[t] == want[t], "float32 -> %s over %u x %u inputs (stride %u): hash "
              "0x%016llx, golden 0x%016llx", narrow_names[t], chunks, GOLDEN_CHUNK, stride,
              (unsigned long long)got[t], (unsigned long long)want[t]);
  printf("  float32 -> narrow over %llu inputs (stride %u): %.2f s\n",
         (unsigned long long)chunks * GOLDEN_CHUNK, stride, now_s() - t0);
}

/* narrow -> float32 -> narrow is the identity on every pattern (NaNs: still NaN, same
   sign). */
static void test_round_trips(void) {
  int bad = 0;
  for (uint32_t p = 0; p < 65536; p++) {
    uint16_t h = (uint16_t)p;
    float a = tkb_f16_to_f32(h), b = tkb_bf16_to_f32(h);
    uint16_t ra = tkb_f32_to_f16(a), rb = tkb_f32_to_bf16(b);
    if (isnan(a) ? !(isnan(tkb_f16_to_f32(ra)) && (ra >> 15) == (p >> 15)) : ra != h)
      if (bad++ < 10) fprintf(stderr, "f16 0x%04x -> 0x%04x\n", h, ra);
    if (isnan(b) ? !(isnan(tkb_bf16_to_f32(rb)) && (rb >> 15) == (p >> 15)) : rb != h)
      if (bad++ < 10) fprintf(stderr, "bf16 0x%04x -> 0x%04x\n", h, rb);
  }
  for (uint32_t p = 0; p < 256; p++) {
    uint8_t v = (uint8_t)p;
    float a = tkb_e4m3fn_to_f32(v), b = tkb_e5m2_to_f32(v);
    uint8_t ra = tkb_f32_to_e4m3fn(a), rb = tkb_f32_to_e5m2(b);
    if (isnan(a) ? !(isnan(tkb_e4m3fn_to_f32(ra)) && (ra >> 7) == (p >> 7)) : ra != v)
      if (bad++ < 10) fprintf(stderr, "e4m3fn 0x%02x -> 0x%02x\n", v, ra);
    if (isnan(b) ? !(isnan(tkb_e5m2_to_f32(rb)) && (rb >> 7) == (p >> 7)) : rb != v)
      if (bad++ < 10) fprintf(stderr, "e5m2 0x%02x -> 0x%02x\n", v, rb);
  }
  CHECK_MSG(bad == 0, "%d round trips changed the pattern", bad);
  /* numpy keeps float16 NaN payloads both ways, so even NaNs round-trip there. */
  CHECK(tkb_f32_to_f16(tkb_f16_to_f32(0x7c01)) == 0x7c01);
  CHECK(tkb_f32_to_f16(tkb_f16_to_f32(0xfd55)) == 0xfd55);
}

/* ------------------------------------------------------------------------------ */
/* tkb_convert                                                                    */
/* ------------------------------------------------------------------------------ */

/* An element as the reference sees it. */
typedef struct {
  enum { R_INT, R_F32, R_F64 } kind;
  int64_t i;
  float f;
  double d;
} ref_val;

static ref_val ref_load(const void *p, tkb_dtype dt, size_t k) {
  ref_val v = {R_INT, 0, 0, 0};
  switch (dt) {
    case TKB_BOOL: v.i = ((const uint8_t *)p)[k] != 0; break;
    case TKB_INT8: v.i = ((const int8_t *)p)[k]; break;
    case TKB_INT16: v.i = ((const int16_t *)p)[k]; break;
    case TKB_INT32: v.i = ((const int32_t *)p)[k]; break;
    case TKB_INT64: v.i = ((const int64_t *)p)[k]; break;
    case TKB_UINT8: v.i = ((const uint8_t *)p)[k]; break;
    case TKB_FLOAT8_E4M3FN: v.kind = R_F32, v.f = tkb_e4m3fn_to_f32(((const uint8_t *)p)[k]); break;
    case TKB_FLOAT8_E5M2: v.kind = R_F32, v.f = tkb_e5m2_to_f32(((const uint8_t *)p)[k]); break;
    case TKB_FLOAT16: v.kind = R_F32, v.f = tkb_f16_to_f32(((const uint16_t *)p)[k]); break;
    case TKB_BFLOAT16: v.kind = R_F32, v.f = tkb_bf16_to_f32(((const uint16_t *)p)[k]); break;
    case TKB_FLOAT32: v.kind = R_F32, v.f = ((const float *)p)[k]; break;
    case TKB_FLOAT64: v.kind = R_F64, v.d = ((const double *)p)[k]; break;
    default: break;
  }
  return v;
}

/* Truncate toward zero, saturate to [lo, hi], NaN -> 0. */
static int64_t ref_trunc_sat(double x, int64_t lo, int64_t hi) {
  if (isnan(x)) return 0;
  x = trunc(x);
  if (x >= (double)hi + 1.0) return hi; /* exact: hi + 1 is a power of two */
  if (x <= (double)lo) return lo;
  return (int64_t)x;
}

static void ref_store(ref_val v, tkb_dtype dt, void *p, size_t k) {
  static const int64_t lo[TKB_DTYPE_COUNT] = {
      [TKB_INT8] = INT8_MIN, [TKB_INT16] = INT16_MIN, [TKB_INT32] = INT32_MIN,
      [TKB_INT64] = INT64_MIN, [TKB_UINT8] = 0};
  static const int64_t hi[TKB_DTYPE_COUNT] = {
      [TKB_INT8] = INT8_MAX, [TKB_INT16] = INT16_MAX, [TKB_INT32] = INT32_MAX,
      [TKB_INT64] = INT64_MAX, [TKB_UINT8] = UINT8_MAX};
  double x = v.kind == R_F32 ? (double)v.f : v.d; /* exact */
  float xf = v.kind == R_INT ? (float)v.i : v.kind == R_F32 ? v.f : (float)v.d;
  int64_t iv = 0;
  if (tkb_dtype_is_int(dt)) {
    iv = v.kind == R_INT ? (v.i < lo[dt] ? lo[dt] : v.i > hi[dt] ? hi[dt] : v.i)
                         : ref_trunc_sat(x, lo[dt], hi[dt]);
  }
  switch (dt) {
    case TKB_BOOL:
      ((uint8_t *)p)[k] = v.kind == R_INT ? v.i != 0 : v.kind == R_F32 ? v.f != 0 : v.d != 0;
      break;
    case TKB_INT8: ((int8_t *)p)[k] = (int8_t)iv; break;
    case TKB_INT16: ((int16_t *)p)[k] = (int16_t)iv; break;
    case TKB_INT32: ((int32_t *)p)[k] = (int32_t)iv; break;
    case TKB_INT64: ((int64_t *)p)[k] = iv; break;
    case TKB_UINT8: ((uint8_t *)p)[k] = (uint8_t)iv; break;
    case TKB_FLOAT8_E4M3FN: ((uint8_t *)p)[k] = tkb_f32_to_e4m3fn(xf); break;
    case TKB_FLOAT8_E5M2: ((uint8_t *)p)[k] = tkb_f32_to_e5m2(xf); break;
    case TKB_FLOAT16: ((uint16_t *)p)[k] = tkb_f32_to_f16(xf); break;
    case TKB_BFLOAT16: ((uint16_t *)p)[k] = tkb_f32_to_bf16(xf); break;
    case TKB_FLOAT32: ((float *)p)[k] = xf; break;
    case TKB_FLOAT64:
      ((double *)p)[k] = v.kind == R_INT ? (double)v.i : v.kind == R_F32 ? (double)v.f : v.d;
      break;
    default: break;
  }
}

/* Reference for one element; same dtype is a byte copy (bool normalized). */
static void ref_convert(const void *src, tkb_dtype from, void *dst, tkb_dtype to, size_t k) {
  size_t es = tkb_dtype_size(from);
  if (from == to && from != TKB_BOOL)
    memcpy((char *)dst + k * es, (const char *)src + k * es, es);
  else
    ref_store(ref_load(src, from, k), to, dst, k);
}

static const double grid_values[] = {
    0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 0.99, -0.99, 2.7, -2.7, 127.0, 127.5, 128.0,
    -128.0, -128.5, -129.0, 200.0, 255.0, 255.9, 256.0, 300.0, -300.0, 32767.0, 32767.9,
    32768.0, -32768.9, -32769.0, 65504.0, 65520.0, 1e5, 16777217.0, 16842753.0,
    2147483647.0, 2147483647.5, 2147483648.0, -2147483648.0, -2147483649.0, 3e9, -3e9,
    9.2e18, 0x1p63, -0x1p63, -9.3e18, 1e20, -1e20, 448.0, 464.0, 480.0, 57344.0, 61440.0,
    1e-3, 1e-8, 1e-40, 1e-320, DBL_MAX, -DBL_MAX, 1.0 + 0x1p-8 + 0x1p-30, INFINITY,
    -INFINITY, NAN, -NAN};
#define NGRID LEN(grid_values)

/* Stores a double into any dtype the way a user would fill a buffer: floats through
   the scalar conversions, integers truncated and saturated, bool nonzero. */
static void put_value(double x, tkb_dtype dt, void *p, size_t k) {
  ref_val v = {R_F64, 0, 0, x};
  ref_store(v, dt, p, k);
}

/* Fills random bit patterns (bool: random bytes, so nonzero-but-not-1 appears). */
static uint64_t rng_state = 0x853c49e6748fea9bull;
static uint64_t rng_next(void) {
  rng_state += 0x9e3779b97f4a7c15ull;
  uint64_t z = rng_state;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static int compare_elems(const void *got, const void *want, tkb_dtype to, size_t n,
                         const void *src, tkb_dtype from, const char *what) {
  size_t es = tkb_dtype_size(to), fs = tkb_dtype_size(from);
  int bad = 0;
  for (size_t k = 0; k < n; k++) {
    if (memcmp((const char *)got + k * es, (const char *)want + k * es, es) != 0) {
      if (bad++ < 5) {
        uint64_t s = 0, g = 0, w = 0;
        memcpy(&s, (const char *)src + k * fs, fs);
        memcpy(&g, (const char *)got + k * es, es);
        memcpy(&w, (const char *)want + k * es, es);
        fprintf(stderr, "%s %s -> %s [%zu]: src bits 0x%llx -> 0x%llx, want 0x%llx\n", what,
                tkb_dtype_name(from), tkb_dtype_name(to), k, (unsigned long long)s,
                (unsigned long long)g, (unsigned long long)w);
      }
    }
  }
  return bad;
}

static void test_convert_pairs(void) {
  enum { NRAND = 4096 };
  static double srcbuf[NRAND + 8], dstbuf[NRAND + 8], refbuf[NRAND + 8];
  int bad = 0;
  for (int from = 0; from < TKB_DTYPE_COUNT; from++) {
    for (int pass = 0; pass < 2; pass++) {
      /* pass 0: the grid of values; pass 1: random bit patterns */
      size_t n = pass ? NRAND : NGRID;
      size_t fs = tkb_dtype_size((tkb_dtype)from);
      if (pass == 0) {
        for (size_t k = 0; k < n; k++) put_value(grid_values[k], (tkb_dtype)from, srcbuf, k);
      } else {
        for (size_t k = 0; k < n * fs; k += 8) {
          uint64_t r = rng_next();
          memcpy((char *)srcbuf + k, &r, 8);
        }
      }
      for (int to = 0; to < TKB_DTYPE_COUNT; to++) {
        for (size_t k = 0; k < n; k++)
          ref_convert(srcbuf, (tkb_dtype)from, refbuf, (tkb_dtype)to, k);
        memset(dstbuf, 0xa5, sizeof dstbuf);
        CHECK_OK(tkb_convert(srcbuf, (tkb_dtype)from, dstbuf, (tkb_dtype)to, n));
        bad += compare_elems(dstbuf, refbuf, (tkb_dtype)to, n, srcbuf, (tkb_dtype)from,
                             pass ? "random" : "grid");
        /* The byte after the last element is untouched. */
        size_t ts = tkb_dtype_size((tkb_dtype)to);
        CHECK(((unsigned char *)dstbuf)[n * ts] == 0xa5);
        /* Unaligned starts and every short length (vector loop tails). */
        if (pass == 0) {
          for (size_t off = 1; off < 4; off++) {
            for (size_t len = 0; off + len <= n; len += 1 + len / 8) {
              memset(dstbuf, 0xa5, sizeof dstbuf);
              CHECK_OK(tkb_convert((const char *)srcbuf + off * fs, (tkb_dtype)from,
                                   (char *)dstbuf + off * ts, (tkb_dtype)to, len));
              bad += compare_elems((char *)dstbuf + off * ts, (char *)refbuf + off * ts,
                                   (tkb_dtype)to, len, (const char *)srcbuf + off * fs,
                                   (tkb_dtype)from, "offset");
            }
          }
        }
      }
    }
  }
  CHECK_MSG(bad == 0, "%d tkb_convert elements differ from the reference", bad);
}

/* The rules, spelled out by hand (the reference above shares their shape). */
static void test_convert_cases(void) {
  const float f[] = {NAN, 1e10f, -1e10f, 2.7f, -2.7f, -0.5f, 300.0f, -0.0f, INFINITY,
                     -INFINITY};
  enum { N = LEN(f) };
  int8_t i8[N];
  uint8_t u8[N], b[N];
  int32_t i32[N];
  int64_t i64[N];
  CHECK_OK(tkb_convert(f, TKB_FLOAT32, i8, TKB_INT8, N));
  CHECK_OK(tkb_convert(f, TKB_FLOAT32, u8, TKB_UINT8, N));
  CHECK_OK(tkb_convert(f, TKB_FLOAT32, i32, TKB_INT32, N));
  CHECK_OK(tkb_convert(f, TKB_FLOAT32, i64, TKB_INT64, N));
  CHECK_OK(tkb_convert(f, TKB_FLOAT32, b, TKB_BOOL, N));
  const int8_t w8[N] = {0, 127, -128, 2, -2, 0, 127, 0, 127, -128};
  const uint8_t wu8[N] = {0, 255, 0, 2, 0, 0, 255, 0, 255, 0};
  const int32_t w32[N] = {0, INT32_MAX, INT32_MIN, 2, -2, 0, 300, 0, INT32_MAX, INT32_MIN};
  const int64_t w64[N] = {0, 10000000000, -10000000000, 2, -2, 0, 300, 0, INT64_MAX, INT64_MIN};
  const uint8_t wb[N] = {1, 1, 1, 1, 1, 1, 1, 0, 1, 1};
  for (int k = 0; k < N; k++) {
    CHECK_MSG(i8[k] == w8[k], "f32 %g -> int8 %d", (double)f[k], i8[k]);
    CHECK_MSG(u8[k] == wu8[k], "f32 %g -> uint8 %d", (double)f[k], u8[k]);
    CHECK_MSG(i32[k] == w32[k], "f32 %g -> int32 %d", (double)f[k], (int)i32[k]);
    CHECK_MSG(i64[k] == w64[k], "f32 %g -> int64 %lld", (double)f[k], (long long)i64[k]);
    CHECK_MSG(b[k] == wb[k], "f32 %g -> bool %d", (double)f[k], b[k]);
  }
  /* float64 -> int truncates the double itself. */
  const double d[] = {16777217.5, -2147483648.9, 2147483647.9, 9007199254740993.0, NAN, 1e300};
  int32_t di32[6];
  int64_t di64[6];
  CHECK_OK(tkb_convert(d, TKB_FLOAT64, di32, TKB_INT32, 6));
  CHECK_OK(tkb_convert(d, TKB_FLOAT64, di64, TKB_INT64, 6));
  CHECK(di32[0] == 16777217 && di32[1] == INT32_MIN && di32[2] == INT32_MAX &&
        di32[3] == INT32_MAX && di32[4] == 0 && di32[5] == INT32_MAX);
  CHECK(di64[0] == 16777217 && di64[1] == -2147483648LL && di64[3] == 9007199254740992LL &&
        di64[4] == 0 && di64[5] == INT64_MAX);
  /* float64 -> narrow rounds through float32, as ml_dtypes does: 1 + 2^-8 + 2^-30 is a
     tie in float32, then rounds to even in bfloat16. */
  double dr = 1.0 + 0x1p-8 + 0x1p-30;
  uint16_t bf;
  CHECK_OK(tkb_convert(&dr, TKB_FLOAT64, &bf, TKB_BFLOAT16, 1));
  CHECK(bf == 0x3f80);
  /* int -> narrow also goes through float32 (ml_dtypes): 2^24 + 2^16 + 1 -> 2^24. */
  int32_t big = (1 << 24) + (1 << 16) + 1;
  CHECK_OK(tkb_convert(&big, TKB_INT32, &bf, TKB_BFLOAT16, 1));
  CHECK(bf == 0x4b80);
  /* Integers saturate instead of wrapping. */
  const int64_t iv[] = {INT64_MIN, -129, -1, 0, 127, 128, 255, 256, INT64_MAX};
  int8_t o8[9];
  uint8_t ou8[9];
  int16_t o16[9];
  CHECK_OK(tkb_convert(iv, TKB_INT64, o8, TKB_INT8, 9));
  CHECK_OK(tkb_convert(iv, TKB_INT64, ou8, TKB_UINT8, 9));
  CHECK_OK(tkb_convert(iv, TKB_INT64, o16, TKB_INT16, 9));
  const int8_t wo8[9] = {-128, -128, -1, 0, 127, 127, 127, 127, 127};
  const uint8_t wou8[9] = {0, 0, 0, 0, 127, 128, 255, 255, 255};
  const int16_t wo16[9] = {-32768, -129, -1, 0, 127, 128, 255, 256, 32767};
  CHECK(memcmp(o8, wo8, 9) == 0 && memcmp(ou8, wou8, 9) == 0 &&
        memcmp(o16, wo16, sizeof o16) == 0);
  /* bool: any nonzero byte is true; results are 0/1. */
  const uint8_t bs[4] = {0, 1, 2, 255};
  float bf32[4];
  uint8_t bb[4];
  CHECK_OK(tkb_convert(bs, TKB_BOOL, bf32, TKB_FLOAT32, 4));
  CHECK(bf32[0] == 0.0f && bf32[1] == 1.0f && bf32[2] == 1.0f && bf32[3] == 1.0f);
  CHECK_OK(tkb_convert(bs, TKB_BOOL, bb, TKB_BOOL, 4));
  CHECK(bb[0] == 0 && bb[1] == 1 && bb[2] == 1 && bb[3] == 1);
  uint8_t inplace[4] = {0, 7, 1, 200};
  CHECK_OK(tkb_convert(inplace, TKB_BOOL, inplace, TKB_BOOL, 4));
  CHECK(inplace[0] == 0 && inplace[1] == 1 && inplace[2] == 1 && inplace[3] == 1);
  /* Same dtype copies bytes, NaN payloads included. */
  uint16_t nanbf = 0x7f81, nanbf_out = 0;
  CHECK_OK(tkb_convert(&nanbf, TKB_BFLOAT16, &nanbf_out, TKB_BFLOAT16, 1));
  CHECK(nanbf_out == 0x7f81);
}

static void test_convert_errors(void) {
  float a[4] = {1, 2, 3, 4}, out[4] = {9, 9, 9, 9};
  CHECK_ERR(tkb_convert(a, (tkb_dtype)99, out, TKB_FLOAT32, 4), TKB_ERR_INVALID_ARGUMENT,
            "from = 99 is not a dtype");
  CHECK_ERR(tkb_convert(a, TKB_FLOAT32, out, (tkb_dtype)-1, 4), TKB_ERR_INVALID_ARGUMENT,
            "to = -1 is not a dtype");
  CHECK_ERR(tkb_convert(NULL, TKB_FLOAT32, out, TKB_FLOAT16, 4), TKB_ERR_INVALID_ARGUMENT,
            "src is NULL with n = 4");
  CHECK_ERR(tkb_convert(a, TKB_FLOAT32, NULL, TKB_FLOAT16, 4), TKB_ERR_INVALID_ARGUMENT,
            "dst is NULL");
  CHECK_ERR(tkb_convert(a, TKB_FLOAT32, a + 1, TKB_FLOAT32, 3), TKB_ERR_INVALID_ARGUMENT,
            "overlap");
  CHECK_ERR(tkb_convert(a, TKB_FLOAT32, (char *)a + 2, TKB_FLOAT16, 2),
            TKB_ERR_INVALID_ARGUMENT, "overlap");
  CHECK_ERR(tkb_convert(a, TKB_FLOAT32, out, TKB_FLOAT64, SIZE_MAX / 4), TKB_ERR_OVERFLOW,
            "overflow");
  CHECK(out[0] == 9 && out[3] == 9);
  CHECK(a[1] == 2);
  CHECK_OK(tkb_convert(NULL, TKB_FLOAT32, NULL, TKB_INT8, 0));
  CHECK_OK(tkb_convert(a, TKB_FLOAT32, a, TKB_FLOAT32, 4)); /* in place, same dtype */
  CHECK(a[0] == 1 && a[3] == 4);
  CHECK_OK(tkb_convert(a, TKB_FLOAT32, out, TKB_FLOAT32, 4));
  CHECK(memcmp(a, out, sizeof a) == 0);
  CHECK(strcmp(tkb_last_error(), "") == 0);
}

int main(void) {
  CHECK_CPU_ISA_OR_SKIP();
  double t0 = now_s();
  test_names();
  test_8bit_tables();
  test_16bit_tables();
  test_spot32();
  test_f32_to_narrow_cases();
  test_round_trips();
  test_convert_cases();
  test_convert_pairs();
  test_convert_errors();
  test_sweeps();
  printf("test_dtype: %.2f s%s\n", now_s() - t0, sweep_quick() ? " (quick)" : "");
  return CHECK_DONE();
}
