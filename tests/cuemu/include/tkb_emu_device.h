/*
 * tkb_emu_device.h (tkbench's CUDA emulator) - the CUDA device language as host C++.
 *
 * A kernel is a plain function; a launch (cu2cpp.py turns k<<<g, b, s, st>>>(args) into
 * tkb_emu::make_launcher("k", k, g, b, s, st)(args)) queues a task on the emulated
 * device's stream, which runs the grid's blocks one after another, and a block's
 * threads as fibers on the device thread (tests/cuemu/emu_device.cpp). A thread runs
 * until it reaches a barrier or a warp intrinsic, which it leaves only when every thread
 * the barrier or the mask names has arrived: so __syncthreads, __syncwarp, shuffles and
 * ballots have CUDA's meaning, and a barrier that can never complete (a deadlock), a
 * shuffle from a lane that is not taking part, or mismatched masks fail the launch with
 * a message instead of returning garbage. Shared memory, device memory from cudaMalloc
 * and the stack are separate heap blocks, so AddressSanitizer sees every overrun, and
 * they start as 0xff bytes (NaN for floats), so a read before a write shows.
 */
#ifndef TKB_CUEMU_DEVICE_H
#define TKB_CUEMU_DEVICE_H

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>

#define __host__
#define __device__
#define __global__
#define __constant__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __align__(n) alignas(n)
/* cu2cpp.py rewrites every __shared__ declaration; one it missed fails to compile. */
#define __shared__ tkb_emu_shared_declaration_not_rewritten_by_cu2cpp
#ifndef __restrict__
#define __restrict__ __restrict
#endif

struct uint3 {
  unsigned x, y, z;
};
struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
};

/* The running thread's coordinates: set by the scheduler before it resumes a fiber. */
extern uint3 threadIdx, blockIdx;
extern dim3 blockDim, gridDim;
constexpr int warpSize = 32;

/* ---- vector types ---- */
#define TKB_EMU_VEC2(T, N, A)                                                                      \
  struct alignas(A) N {                                                                            \
    T x, y;                                                                                        \
  };                                                                                               \
  inline N make_##N(T a, T b) { return N{a, b}; }
#define TKB_EMU_VEC4(T, N, A)                                                                      \
  struct alignas(A) N {                                                                            \
    T x, y, z, w;                                                                                  \
  };                                                                                               \
  inline N make_##N(T a, T b, T c, T d) { return N{a, b, c, d}; }
TKB_EMU_VEC2(unsigned, uint2, 8)
TKB_EMU_VEC4(unsigned, uint4, 16)
TKB_EMU_VEC2(int, int2, 8)
TKB_EMU_VEC4(int, int4, 16)
TKB_EMU_VEC2(float, float2, 8)
TKB_EMU_VEC4(float, float4, 16)
TKB_EMU_VEC2(double, double2, 16)
TKB_EMU_VEC2(unsigned short, ushort2, 4)
TKB_EMU_VEC4(unsigned short, ushort4, 8)
TKB_EMU_VEC2(unsigned long long, ulonglong2, 16)
TKB_EMU_VEC2(long long, longlong2, 16)
#undef TKB_EMU_VEC2
#undef TKB_EMU_VEC4

/* ---- the scheduler's entry points (emu_device.cpp) ---- */
namespace tkb_emu {
enum warp_op { W_SYNC, W_SHFL, W_SHFL_UP, W_SHFL_DOWN, W_SHFL_XOR, W_BALLOT };
/* The calling thread's part in a warp intrinsic: returns the value (or ballot) it gets. */
uint64_t warp_collective(warp_op op, unsigned mask, uint64_t value, int arg, int width);
void block_barrier();
/* A thread that polls for the host (__nanosleep in a spin loop) sleeps and lets the
 * block's other threads run; never a deadlock, since the host may still write. */
void sleep_yield(unsigned ns);
unsigned char *dyn_smem();
unsigned char *static_smem(const void *key, size_t bytes, size_t align);
void mbar_init(uint64_t *bar, unsigned count);
void mbar_arrive_tx(uint64_t *bar, unsigned bytes);
void bulk_load(void *dst, const void *src, unsigned bytes, uint64_t *bar);
/* Blocks until phase `phase` (parity) of bar completed; the bulk loads counted on bar
 * land only here, so a read of their memory before the wait sees the old bytes. */
void mbar_wait(uint64_t *bar, unsigned phase);
uint64_t device_clock();

/* A launch: checks the configuration as CUDA does (an error is the launch's, for
 * cudaGetLastError) and queues body, which runs the kernel for the current thread. */
void launch(const char *name, const void *kernel, dim3 grid, dim3 block, size_t smem,
            std::function<void()> body);

template <class... P>
struct launcher {
  void (*kernel)(P...);
  const char *name;
  dim3 grid, block;
  size_t smem;
  template <class... A>
  void operator()(A &&...a) const {
    static_assert(sizeof...(A) == sizeof...(P), "a kernel launch with the wrong number of arguments");
    /* by value, as CUDA copies a launch's arguments when it launches */
    auto args = std::make_shared<std::tuple<std::decay_t<P>...>>(std::forward<A>(a)...);
    auto k = kernel;
    launch(name, reinterpret_cast<const void *>(kernel), grid, block, smem,
           [k, args] { std::apply(k, *args); });
  }
};
template <class... P>
launcher<P...> make_launcher(const char *name, void (*kernel)(P...), dim3 grid, dim3 block, size_t smem = 0,
                             cudaStream_t = 0) {
  return launcher<P...>{kernel, name, grid, block, smem};
}

cudaError_t func_set_attribute(const void *kernel, cudaFuncAttribute attr, int value);
cudaError_t func_get_attributes(cudaFuncAttributes *attr, const void *kernel);
cudaError_t occupancy(int *blocks, const void *kernel, int threads, size_t smem);

template <class T>
uint64_t to_bits(T v) {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable<T>::value, "a shuffle of up to 8 bytes");
  uint64_t u = 0;
  std::memcpy(&u, &v, sizeof v);
  return u;
}
template <class T>
T from_bits(uint64_t u) {
  T v;
  std::memcpy(&v, &u, sizeof v);
  return v;
}
} // namespace tkb_emu

template <class K>
cudaError_t cudaFuncSetAttribute(K *kernel, cudaFuncAttribute attr, int value) {
  return tkb_emu::func_set_attribute(reinterpret_cast<const void *>(kernel), attr, value);
}
template <class K>
cudaError_t cudaFuncGetAttributes(cudaFuncAttributes *attr, K *kernel) {
  return tkb_emu::func_get_attributes(attr, reinterpret_cast<const void *>(kernel));
}
template <class K>
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks, K kernel, int threads, size_t smem) {
  return tkb_emu::occupancy(blocks, reinterpret_cast<const void *>(kernel), threads, smem);
}

/* ---- synchronization and warp intrinsics ---- */
inline void __syncthreads() { tkb_emu::block_barrier(); }
inline void __syncwarp(unsigned mask = 0xffffffffu) { tkb_emu::warp_collective(tkb_emu::W_SYNC, mask, 0, 0, 32); }
template <class T>
inline T __shfl_sync(unsigned mask, T v, int src, int width = warpSize) {
  return tkb_emu::from_bits<T>(tkb_emu::warp_collective(tkb_emu::W_SHFL, mask, tkb_emu::to_bits(v), src, width));
}
template <class T>
inline T __shfl_up_sync(unsigned mask, T v, unsigned d, int width = warpSize) {
  return tkb_emu::from_bits<T>(tkb_emu::warp_collective(tkb_emu::W_SHFL_UP, mask, tkb_emu::to_bits(v), (int)d, width));
}
template <class T>
inline T __shfl_down_sync(unsigned mask, T v, unsigned d, int width = warpSize) {
  return tkb_emu::from_bits<T>(
      tkb_emu::warp_collective(tkb_emu::W_SHFL_DOWN, mask, tkb_emu::to_bits(v), (int)d, width));
}
template <class T>
inline T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = warpSize) {
  return tkb_emu::from_bits<T>(tkb_emu::warp_collective(tkb_emu::W_SHFL_XOR, mask, tkb_emu::to_bits(v), lane_mask, width));
}
inline unsigned __ballot_sync(unsigned mask, int pred) {
  return (unsigned)tkb_emu::warp_collective(tkb_emu::W_BALLOT, mask, pred != 0, 0, 32);
}
inline int __any_sync(unsigned mask, int pred) { return __ballot_sync(mask, pred) != 0; }
inline int __all_sync(unsigned mask, int pred) { return __ballot_sync(mask, pred) == (__ballot_sync(mask, 1)); }
inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_block() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_system() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __nanosleep(unsigned ns) { tkb_emu::sleep_yield(ns); }
inline long long clock64() { return (long long)tkb_emu::device_clock(); }
inline size_t __cvta_generic_to_shared(const void *p) { return (size_t)p; }
inline size_t __cvta_generic_to_global(const void *p) { return (size_t)p; }
template <class T>
inline T __ldg(const T *p) { return *p; }

/* ---- atomics: one device thread runs every block, so a plain read-modify-write is
 * atomic here; the integer forms use the compiler's atomics all the same ---- */
template <class T>
inline T atomicAdd(T *p, T v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
inline float atomicAdd(float *p, float v) {
  float old = *p;
  *p = old + v;
  return old;
}
inline double atomicAdd(double *p, double v) {
  double old = *p;
  *p = old + v;
  return old;
}
template <class T>
inline T atomicMax(T *p, T v) {
  T old = *p;
  if (v > old) *p = v;
  return old;
}
template <class T>
inline T atomicMin(T *p, T v) {
  T old = *p;
  if (v < old) *p = v;
  return old;
}
template <class T>
inline T atomicExch(T *p, T v) { return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST); }
template <class T>
inline T atomicCAS(T *p, T cmp, T v) {
  __atomic_compare_exchange_n(p, &cmp, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return cmp;
}
template <class T>
inline T atomicOr(T *p, T v) { return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST); }

/* ---- bits and conversions: exact, as the hardware's ---- */
inline unsigned __float_as_uint(float f) { return tkb_emu::to_bits(f) & 0xffffffffu; }
inline float __uint_as_float(unsigned u) { return tkb_emu::from_bits<float>(u); }
inline int __float_as_int(float f) { return (int)__float_as_uint(f); }
inline float __int_as_float(int i) { return __uint_as_float((unsigned)i); }
inline long long __double_as_longlong(double d) { return (long long)tkb_emu::to_bits(d); }
inline double __longlong_as_double(long long v) { return tkb_emu::from_bits<double>((uint64_t)v); }
inline float __ll2float_rn(long long v) { return (float)v; }
inline double __ll2double_rn(long long v) { return (double)v; }
inline float __int2float_rn(int v) { return (float)v; }
inline float __uint2float_rn(unsigned v) { return (float)v; }
inline double __int2double_rn(int v) { return (double)v; }
inline int __float2int_rn(float f) { return (int)std::nearbyint(f); }
inline int __float2int_rz(float f) { return (int)f; }
inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((uint64_t)a * b) >> 32); }
inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
  __extension__ typedef unsigned __int128 u128;
  return (unsigned long long)(((u128)a * b) >> 64);
}
inline int __popc(unsigned v) { return __builtin_popcount(v); }
inline int __popcll(unsigned long long v) { return __builtin_popcountll(v); }
inline int __clz(unsigned v) { return v ? __builtin_clz(v) : 32; }
inline int __clzll(unsigned long long v) { return v ? __builtin_clzll(v) : 64; }
inline int __ffs(unsigned v) { return __builtin_ffs((int)v); }
inline int __ffsll(unsigned long long v) { return __builtin_ffsll((long long)v); }
inline unsigned __brev(unsigned v) {
  unsigned r = 0;
  for (int i = 0; i < 32; i++) r |= ((v >> i) & 1u) << (31 - i);
  return r;
}

/* ---- float math: rounded as IEEE (the sources compile with -fmad=false for nvcc and
 * -ffp-contract=off here); the fast intrinsics as the libm functions they approximate ---- */
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline float __fmaf_rn(float a, float b, float c) { return std::fma(a, b, c); }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __fma_rn(double a, double b, double c) { return std::fma(a, b, c); }
inline float __frcp_rn(float a) { return 1.0f / a; }
inline float __fsqrt_rn(float a) { return std::sqrt(a); }
inline float __fdividef(float a, float b) { return a / b; }
inline float __expf(float a) { return std::exp(a); }
inline float __logf(float a) { return std::log(a); }
inline float __log2f(float a) { return std::log2(a); }
inline float __sinf(float a) { return std::sin(a); }
inline float __cosf(float a) { return std::cos(a); }
inline float __tanhf(float a) { return std::tanh(a); }
inline float __saturatef(float a) { return a != a ? 0.0f : a < 0.0f ? 0.0f : a > 1.0f ? 1.0f : a; }
inline float rsqrtf(float a) { return 1.0f / std::sqrt(a); }
inline double rsqrt(double a) { return 1.0 / std::sqrt(a); }
inline float exp10f(float a) { return std::pow(10.0f, a); }

/* CUDA's global min and max overloads (integers and floats; mixed types promote) */
template <class A, class B>
inline typename std::common_type<A, B>::type min(A a, B b) {
  typedef typename std::common_type<A, B>::type T;
  return (T)b < (T)a ? (T)b : (T)a;
}
template <class A, class B>
inline typename std::common_type<A, B>::type max(A a, B b) {
  typedef typename std::common_type<A, B>::type T;
  return (T)a < (T)b ? (T)b : (T)a;
}

using std::exp;
using std::log;
using std::sqrt;
using std::tanh;
using std::fabs;
using std::fmax;
using std::fmin;
using std::isnan;
using std::isinf;
using std::isfinite;

#endif /* TKB_CUEMU_DEVICE_H */
