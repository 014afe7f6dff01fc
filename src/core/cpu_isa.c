/*
 * cpu_isa.c - which instruction-set variant of the cpu kernels runs (internal.h:
 * tkb__cpu_isa; public: tkb_cpu_isa).
 *
 * The library is built for a baseline (x86-64-v2 by default, CMakeLists.txt) and its hot
 * kernels once more per variant, each file <family>_<isa>.c compiled with that ISA's
 * flags: avx2 (AVX2, FMA, BMI1/2: x86-64-v3 as the kernels use it) and avx512 (that plus
 * AVX-512 F, BW, VL, DQ, CD: x86-64-v4) on x86-64; neon (Advanced SIMD, intrinsics where
 * the compiler's own vectorization of the portable C fell short) on aarch64. Nothing runs
 * an instruction the CPU lacks: the path is chosen once, on first use, as the best the
 * CPU supports (and the OS has enabled: __builtin_cpu_supports checks the saved register
 * state too; on aarch64 the kernel's hwcaps), and a forced path never goes above that.
 * Other architectures build the portable path only.
 *
 * A path may also use an extension where the CPU has it, chosen inside the kernels:
 * avx512 rounds to bfloat16 with AVX512-BF16's vcvtneps2bf16 (Cooper Lake, Sapphire
 * Rapids, Zen 4 on; tkb__cpu_avx512bf16), the same bits as its integer rounding.
 *
 * TKB_CPU_ISA=portable|avx2|avx512|neon forces a path (auto or unset: the best), so each
 * one can be measured and tested on a machine that has the larger ISA. A value that is not a
 * path, or a path this CPU or build cannot run, is not an error the kernels could return
 * (they are chosen inside calls): the best path the CPU allows is taken instead and
 * tkb__cpu_isa_warning() says what happened, which the command line prints.
 */
#include "internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if TKB_CPU_NEON
#include <sys/auxv.h>
#ifndef HWCAP_ASIMD
#define HWCAP_ASIMD (1 << 1)
#endif
#endif

static const char *const isa_names[TKB__ISA_COUNT] = {
    [TKB__ISA_PORTABLE] = "portable", [TKB__ISA_AVX2] = "avx2", [TKB__ISA_AVX512] = "avx512",
    [TKB__ISA_NEON] = "neon"};

/* What each path needs beyond the baseline, as said in messages. */
static const char *const isa_needs[TKB__ISA_COUNT] = {
    [TKB__ISA_PORTABLE] = "nothing",
    [TKB__ISA_AVX2] = "AVX2, FMA, BMI1 and BMI2",
    [TKB__ISA_AVX512] = "AVX2, FMA, BMI1/2 and AVX-512 F, BW, VL, DQ and CD",
    [TKB__ISA_NEON] = "aarch64's Advanced SIMD"};

/* This build's ladder, lowest first (internal.h). */
#if TKB_CPU_VARIANTS
static const tkb__isa ladder[] = {TKB__ISA_PORTABLE, TKB__ISA_AVX2, TKB__ISA_AVX512};
#define LADDER_NAMES "portable, avx2, avx512"
#elif TKB_CPU_NEON
static const tkb__isa ladder[] = {TKB__ISA_PORTABLE, TKB__ISA_NEON};
#define LADDER_NAMES "portable, neon"
#else
static const tkb__isa ladder[] = {TKB__ISA_PORTABLE};
#define LADDER_NAMES "portable"
#endif
#define LADDER_LEN ((int)(sizeof ladder / sizeof ladder[0]))

/* isa's rung on the ladder, -1 when this build has no such path. */
static int rung(tkb__isa isa) {
  for (int i = 0; i < LADDER_LEN; i++)
    if (ladder[i] == isa) return i;
  return -1;
}

static pthread_once_t isa_once = PTHREAD_ONCE_INIT;
static tkb__isa isa_best = TKB__ISA_PORTABLE;       /* the best this CPU and build run */
static bool cpu_bf16;                               /* the CPU has AVX512-BF16 */
static _Atomic int isa_now = TKB__ISA_PORTABLE;     /* the path taken */
static _Atomic bool extras_on = true;               /* the path may use its extensions */
static char isa_warning[256];

/* The best path of this CPU and build. */
static tkb__isa detect(void) {
#if TKB_CPU_VARIANTS
  __builtin_cpu_init();
  const bool v3 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                  __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2");
  const bool v4 = v3 && __builtin_cpu_supports("avx512f") &&
                  __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
                  __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512cd");
  cpu_bf16 = v4 && __builtin_cpu_supports("avx512bf16");
  return v4 ? TKB__ISA_AVX512 : v3 ? TKB__ISA_AVX2 : TKB__ISA_PORTABLE;
#elif TKB_CPU_NEON
  /* Advanced SIMD is part of every AArch64 CPU Linux runs on; the hwcap says so */
  return (getauxval(AT_HWCAP) & HWCAP_ASIMD) ? TKB__ISA_NEON : TKB__ISA_PORTABLE;
#else
  return TKB__ISA_PORTABLE;
#endif
}

static int parse_isa(const char *s) {
  for (int i = 0; i < TKB__ISA_COUNT; i++)
    if (!strcmp(s, isa_names[i])) return i;
  return -1;
}

static void choose(void) {
  isa_best = detect();
  tkb__isa pick = isa_best;
  const char *env = getenv("TKB_CPU_ISA");
  if (env && *env && strcmp(env, "auto") != 0) {
    const int want = parse_isa(env);
    if (want < 0)
      snprintf(isa_warning, sizeof isa_warning,
               "TKB_CPU_ISA=%.40s is not a cpu kernel path (portable, avx2, avx512, neon or "
               "auto); using %s, the best this machine runs",
               env, isa_names[isa_best]);
    else if (rung((tkb__isa)want) < 0)
      snprintf(isa_warning, sizeof isa_warning,
               "TKB_CPU_ISA=%s: this build's paths are " LADDER_NAMES " (another "
               "architecture's are not built); using %s, the best this machine runs",
               env, isa_names[isa_best]);
    else if (rung((tkb__isa)want) > rung(isa_best))
      snprintf(isa_warning, sizeof isa_warning,
               "TKB_CPU_ISA=%s needs %s, which this CPU lacks; using %s, the best it runs",
               env, isa_needs[want], isa_names[isa_best]);
    else
      pick = (tkb__isa)want;
  }
  atomic_store(&isa_now, (int)pick);
}

tkb__isa tkb__cpu_isa(void) {
  pthread_once(&isa_once, choose);
  return (tkb__isa)atomic_load_explicit(&isa_now, memory_order_relaxed);
}

const char *tkb__isa_name(tkb__isa isa) {
  return (unsigned)isa < TKB__ISA_COUNT ? isa_names[isa] : "invalid";
}

bool tkb__isa_supported(tkb__isa isa) {
  pthread_once(&isa_once, choose);
  return (unsigned)isa < TKB__ISA_COUNT && rung(isa) >= 0 && rung(isa) <= rung(isa_best);
}

tkb__isa tkb__isa_below(tkb__isa isa) {
  const int r = rung(isa);
  return r > 0 ? ladder[r - 1] : isa;
}

bool tkb__cpu_avx512bf16(void) {
  return tkb__cpu_isa() == TKB__ISA_AVX512 && cpu_bf16 &&
         atomic_load_explicit(&extras_on, memory_order_relaxed);
}

tkb_status tkb__cpu_isa_set(tkb__isa isa, bool extras) {
  pthread_once(&isa_once, choose);
  if ((unsigned)isa >= TKB__ISA_COUNT)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "cpu kernel path %d is not one of 0 (portable), 1 (avx2), 2 (avx512), "
                         "3 (neon)",
                         (int)isa);
  if (rung(isa) < 0)
    return tkb_set_error(TKB_ERR_UNSUPPORTED,
                         "cpu kernel path %s needs %s; this build's paths are " LADDER_NAMES,
                         isa_names[isa], isa_needs[isa]);
  if (rung(isa) > rung(isa_best))
    return tkb_set_error(TKB_ERR_UNSUPPORTED,
                         "cpu kernel path %s needs %s; this CPU runs %s at best",
                         isa_names[isa], isa_needs[isa], isa_names[isa_best]);
  atomic_store(&isa_now, (int)isa);
  atomic_store(&extras_on, extras);
  return TKB_OK;
}

const char *tkb__cpu_isa_warning(void) {
  pthread_once(&isa_once, choose);
  return isa_warning;
}

const char *tkb_cpu_isa(void) { return isa_names[tkb__cpu_isa()]; }
