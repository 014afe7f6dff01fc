/*
 * cpu_portable.c - linear_softmax_cross_entropy_loss's cpu kernels (cpu_variant.h) compiled
 * for any CPU (the build's baseline).
 */
#define TKB_ISA_SUFFIX portable
#include "cpu_variant.h"
