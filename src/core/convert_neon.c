/* convert_neon.c - tkb_convert's loops (convert_kernels.h) for aarch64's neon path: the
 * body as the compiler vectorizes it with Advanced SIMD, as on the portable path (no
 * intrinsics of its own yet; its table keeps a run on the neon path whole). */
#define TKB_ISA_SUFFIX neon
#define TKB_CONVERT_KERNELS_BODY
#include "convert_kernels.h"
