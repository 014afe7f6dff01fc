/*
 * cpu_variant.h - linear_softmax_cross_entropy_loss's cpu kernels for one instruction
 * set: included once by each cpu_<isa>.c (which defines TKB_ISA_SUFFIX and is compiled
 * with that ISA's flags), it instantiates cpu_kernels.h for float32 and float64 math and
 * defines the file's table, tkb__lsce_cpu_kernels_<isa> (lsce_cpu.h). The products are
 * OpenBLAS's, which picks its own kernels at run time; what the ISA changes is the code
 * around them (the chunk loop's exp, max and sums, the widening).
 */
#include "lsce_cpu.h"

#define T float
#define MATH_DT TKB_FLOAT32
#define GEMM tkb__blas.sgemm
#define EXP ops_expf
#define LOG logf
#define FN(name) name##_f32
#include "cpu_kernels.h"
#undef T
#undef MATH_DT
#undef GEMM
#undef EXP
#undef LOG
#undef FN

#define T double
#define MATH_DT TKB_FLOAT64
#define GEMM tkb__blas.dgemm
#define EXP exp
#define LOG log
#define FN(name) name##_f64
#include "cpu_kernels.h"
#undef T
#undef MATH_DT
#undef GEMM
#undef EXP
#undef LOG
#undef FN

const lsce_cpu_kernels TKB_ISA_NAME(tkb__lsce_cpu_kernels) = {
    .forward_f32 = forward_f32, .forward_f64 = forward_f64,
    .vjp_f32 = vjp_f32, .vjp_f64 = vjp_f64};
