/*
 * cpu_avx2.c - dot_product_attention's cpu kernels (cpu_variant.h) compiled for AVX2 + FMA
 * (the instruction sets block's AVX2 flags, CMakeLists.txt).
 */
#define TKB_ISA_SUFFIX avx2
#include "cpu_variant.h"
