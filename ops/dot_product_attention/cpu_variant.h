/*
 * cpu_variant.h - dot_product_attention's cpu kernels for one instruction set: included
 * once by each cpu_<isa>.c (which defines TKB_ISA_SUFFIX and is compiled with that ISA's
 * flags), it instantiates cpu_kernels.h for float32 and float64 math and defines the
 * file's table, tkb__attn_cpu_kernels_<isa> (attn_cpu.h). The tile products are
 * OpenBLAS's, which picks its own kernels at run time; what the ISA changes is the code
 * around them (the softmax's exp and sums, masks, widening, transposes).
 */
#include "attn_cpu.h"

#define NUM float
#define SFX f32
#define GEMM tkb__blas.sgemm
#define EXPT ops_expf
#ifdef ATTN_EXP_ROW_F32 /* the variant's own row exp (cpu_avx2.c, cpu_avx512.c) */
#define EXP_ROW ATTN_EXP_ROW_F32
#endif
#ifdef ATTN_TILE_MAX_F32 /* and its exp for bounded arguments (cpu_avx2.c) */
#define TILE_MAX ATTN_TILE_MAX_F32
#define EXP_ROW_BOUNDED ATTN_EXP_ROW_BOUNDED_F32
#define EXP_ROW_BOUNDED_LO ATTN_EXP_ROW_BOUNDED_LO
#endif
#include "cpu_kernels.h"
#undef NUM
#undef SFX
#undef GEMM
#undef EXPT
#undef EXP_ROW
#undef TILE_MAX
#undef EXP_ROW_BOUNDED
#undef EXP_ROW_BOUNDED_LO

#define NUM double
#define SFX f64
#define GEMM tkb__blas.dgemm
#define EXPT exp
#include "cpu_kernels.h"
#undef NUM
#undef SFX
#undef GEMM
#undef EXPT

const attn_cpu_kernels TKB_ISA_NAME(tkb__attn_cpu_kernels) = {
    .forward_f32 = forward_f32, .forward_f64 = forward_f64,
    .vjp_f32 = vjp_f32, .vjp_f64 = vjp_f64};
