/*
 * cpu_avx512.c - dot_product_attention's cpu kernels (cpu_variant.h) compiled for AVX-512
 * (the instruction sets block's AVX-512 flags, CMakeLists.txt).
 */
#define TKB_ISA_SUFFIX avx512
#include "cpu_variant.h"
