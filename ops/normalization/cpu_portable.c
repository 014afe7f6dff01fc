/*
 * cpu_portable.c - normalization's cpu passes (cpu_forward.h, cpu_vjp.h) for any CPU:
 * the loops as the compiler vectorizes them for the build's baseline, bfloat16 rounded
 * by dtype_convert.h's conversion, y stored through the cache.
 */
#include "dtype_convert.h"
#include "norm_cpu.h"

#define TKB_ISA_SUFFIX portable
#define NORM_BF16_OUT(x, y, n, m, rs, scale, offset) ((int64_t)0)
#define NORM_BF16_LANES_OUT(x, y, c, mean, rstd, hs, s, ho, o, nt) ((int64_t)0)
#define NORM_LANES_NT 0
#define NORM_SFENCE() ((void)0)

#include "cpu_forward.h"
#include "cpu_vjp.h"

const norm_cpu_kernels TKB_ISA_NAME(tkb__norm_cpu_kernels) = {
    .forward_f32 = norm_forward_f32, .forward_f64 = norm_forward_f64,
    .vjp_f32 = norm_vjp_f32, .vjp_f64 = norm_vjp_f64};
