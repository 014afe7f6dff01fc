/*
 * fill_kernel.h - the boundary between fill.c (C, plans the fill through the core) and
 * fill.cu (CUDA C++, runs it): plain data only, readable by both languages (backend.h
 * is C11 with <stdatomic.h>, which nvcc's C++ does not take). draw and dtype carry
 * tkb_fill_draw's and tkb_dtype's values; fill.c checks at compile time that they are
 * the numbers fill.cu spells.
 */
#ifndef TKB_CU_FILL_KERNEL_H
#define TKB_CU_FILL_KERNEL_H

#include <stdint.h>

typedef struct tkb_cu_fill_args {
  void *out;          /* device pointer */
  uint64_t n;         /* elements */
  uint64_t seed, stream;
  int draw, dtype, affine;
  float mean_f, std_f, lo_f, hi_f, mn_f, mx_f;
  double mean_d, std_d, lo_d, hi_d, mn_d, mx_d;
  int64_t ilo;
  uint64_t width;
} tkb_cu_fill_args;

#ifdef __cplusplus
extern "C" {
#endif
/* Launches the fill on the legacy default stream without waiting; returns the
 * cudaError_t of the launch as an int (0: launched). */
int tkb_cu_fill_launch(const tkb_cu_fill_args *a);
#ifdef __cplusplus
}
#endif

#endif /* TKB_CU_FILL_KERNEL_H */
