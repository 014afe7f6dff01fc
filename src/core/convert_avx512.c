/* convert_avx512.c - tkb_convert's loops (convert_kernels.h) compiled for AVX-512 (the instruction sets block's AVX-512 flags, CMakeLists.txt). */
#define TKB_ISA_SUFFIX avx512
#define TKB_CONVERT_KERNELS_BODY
#include "convert_kernels.h"
