/*
 * cpu_neon.c - linear_softmax_cross_entropy_loss's cpu kernels (cpu_variant.h) for
 * aarch64's neon path: the chunk loop as the compiler vectorizes it with Advanced SIMD,
 * as on the portable path.
 */
#define TKB_ISA_SUFFIX neon
#include "cpu_variant.h"
