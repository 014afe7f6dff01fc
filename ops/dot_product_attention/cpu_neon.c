/*
 * cpu_neon.c - dot_product_attention's cpu kernels (cpu_variant.h) for aarch64's neon
 * path: the softmax, masks and transposes as the compiler vectorizes them with Advanced
 * SIMD and its fused multiply-add (ops_expf's polynomial), as on the portable path; the
 * tile products are OpenBLAS's either way.
 */
#define TKB_ISA_SUFFIX neon
#include "cpu_variant.h"
