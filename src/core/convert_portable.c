/* convert_portable.c - tkb_convert's loops (convert_kernels.h) compiled for any CPU (the build's baseline). */
#define TKB_ISA_SUFFIX portable
#define TKB_CONVERT_KERNELS_BODY
#include "convert_kernels.h"
