/*
 * cpu_portable.c - dot_product_attention's cpu kernels (cpu_variant.h) compiled for any CPU
 * (the build's baseline).
 */
#define TKB_ISA_SUFFIX portable
#include "cpu_variant.h"
