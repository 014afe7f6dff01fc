/*
 * cross-aarch64-blas.c - the BLAS calls libtkbench makes, plain and slow: cblas_sgemm
 * and cblas_dgemm (row- or column-major, either operand transposed, as loops) and
 * OpenBLAS's thread and name queries. scripts/cross-aarch64.sh links the aarch64 tests
 * against it: Debian has no arm64 OpenBLAS to install next to an amd64 system without
 * adding dpkg's arm64 architecture. Only for running tests under qemu.
 */
#include <stddef.h>
enum { RowMajor = 101, ColMajor = 102, NoTrans = 111, Trans = 112, ConjTrans = 113 };
#define GEMM(NAME, T)                                                                       \
  void NAME(int order, int ta, int tb, int M, int N, int K, T alpha, const T *A, int lda,   \
            const T *B, int ldb, T beta, T *C, int ldc) {                                   \
    for (int i = 0; i < M; i++)                                                             \
      for (int j = 0; j < N; j++) {                                                         \
        T s = 0;                                                                            \
        for (int k = 0; k < K; k++) {                                                       \
          T a, b;                                                                           \
          if (order == RowMajor) {                                                          \
            a = ta == NoTrans ? A[(size_t)i * lda + k] : A[(size_t)k * lda + i];            \
            b = tb == NoTrans ? B[(size_t)k * ldb + j] : B[(size_t)j * ldb + k];            \
          } else {                                                                          \
            a = ta == NoTrans ? A[(size_t)k * lda + i] : A[(size_t)i * lda + k];            \
            b = tb == NoTrans ? B[(size_t)j * ldb + k] : B[(size_t)k * ldb + j];            \
          }                                                                                 \
          s += a * b;                                                                       \
        }                                                                                   \
        T *c = order == RowMajor ? &C[(size_t)i * ldc + j] : &C[(size_t)j * ldc + i];       \
        *c = alpha * s + (beta == 0 ? 0 : beta * *c);                                       \
      }                                                                                     \
  }
GEMM(cblas_sgemm, float)
GEMM(cblas_dgemm, double)
int openblas_get_num_threads(void) { return 1; }
int openblas_get_parallel(void) { return 0; }
void openblas_set_num_threads(int n) { (void)n; }
char *openblas_get_corename(void) { return "naive"; }
char *openblas_get_config(void) { return "naive"; }
