/* cuda_fp16.h (tkbench's CUDA emulator): the 16-bit float types are in cuda_bf16.h. */
#include "cuda_bf16.h"
