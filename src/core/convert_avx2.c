/* convert_avx2.c - tkb_convert's loops (convert_kernels.h) compiled for AVX2 + FMA (the instruction sets block's AVX2 flags, CMakeLists.txt). */
#define TKB_ISA_SUFFIX avx2
#define TKB_CONVERT_KERNELS_BODY
#include "convert_kernels.h"
