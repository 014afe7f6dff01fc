/* cuda_runtime_api.h (tkbench's CUDA emulator): the runtime API is in cuda_runtime.h. */
#include "cuda_runtime.h"
