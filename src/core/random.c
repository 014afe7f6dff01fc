/*
 * random.c - tkb_fill: seeded, counter-based random initialization of arrays.
 *
 * Also implements the internal tkb__fill_call (declared in internal.h):
 *   tkb_status tkb__fill_call(tkb_array *a, const tkb_init *init, uint64_t seed,
 *                             uint64_t stream, const tkb_args *call);
 * tkb_fill with the bound call handed to a callback initializer's ctx->call
 * (standardization passes it); tkb_fill(a, init, seed, stream) is
 * tkb__fill_call(a, init, seed, stream, NULL).
 *
 * The values are defined by src/core/philox.h (the element <-> counter mapping and
 * the transforms) plus the plan (fill_plan.c: which transform, the parameters as the
 * dtype's arithmetic sees them). A device backend reproduces a fill by building the
 * same plan and running philox.h's functions per element.
 *
 * Per kind (E = elements per Philox counter, see philox.h):
 *  - float normal (DEFAULT on floats, NORMAL): z from tkb_px_normal16 (E = 8, the
 *    dtypes of 16 bits or fewer: bfloat16, float16, float8), tkb_px_box_mullerf (E = 4,
 *    float32) or tkb_px_box_muller (E = 2, float64); unless
 *    (mean, std) == (0, 1), v = fma(z, std, mean) in that precision with mean and
 *    std rounded to it; narrow dtypes then round v to the dtype (tkb_convert, which
 *    rounds as tkb_f32_to_<dtype> does).
 *  - float uniform [lo, hi): tkb_px_lerp_clampf(tkb_px_u01f(w), lo, hi, mn, mx) (E=4)
 *    or the double versions (E = 2, float64), with mn/mx the smallest/largest value
 *    of the dtype in [lo, hi); narrow dtypes then round (which stays in [mn, mx]).
 *  - integer range [lo, hi) of width w (DEFAULT on ints and bool, INT_RANGE, UNIFORM
 *    on ints and bool): lo + tkb_px_range32(w32, w) when w <= 2^32 (E = 4), else
 *    lo + tkb_px_range64(w64, w) (E = 2); float dtypes get that integer rounded to
 *    the dtype (through float32 for the narrow ones).
 *  - constant: no draws.
 *
 * Speed: the block generators (fill_kernels.h) are compiled once per instruction set
 * (fill_portable.c, fill_avx2.c, fill_avx512.c) and a fill runs those of the path
 * tkb__cpu_isa() chose; every path gives the same bits.
 */
#include "fill_kernels.h"
#include "philox.h"

#include <math.h>
#include <pthread.h>
#include <string.h>

/* Blocks below which a fill stays on the calling thread. */
#define PARALLEL_MIN_BLOCKS 32

/* ------------------------------------------------------------------------------ */
/* The 16-bit draws' tables rounded to the dtype                                   */
/* ------------------------------------------------------------------------------ */

/* The table rounded to a 2-byte dtype (bfloat16 or float16), indexed by the whole 16-bit
 * draw b: entry b is the magnitude T[b & 0x7fff] rounded, with b's bit 15 as its sign
 * (rounding -z gives z's bits with the sign set: test_random checks every entry). A
 * plain draw of those dtypes is then one 16-bit lookup, with no float32 in between
 * (bench_init --dtype bfloat16: 0.63 ns per element per thread, 0.90 through float32),
 * and no masking of the index and or of the sign either: 128 KiB instead of 64, which
 * the scalar lookups find in L2 all the same (L1 holds neither). The gathers of the avx2
 * and avx512 paths read only the positive half and or the sign in (fill_avx512.c says
 * why). Built once per process, on first use. */
#define N16_SIGNED_ENTRIES (2 * TKB_NORMAL16_ENTRIES)
/* + 2: the gathers of fill_avx2.c and fill_avx512.c read 4 bytes at each entry */
static uint16_t n16_bf16[N16_SIGNED_ENTRIES + 2], n16_f16[N16_SIGNED_ENTRIES + 2];
static pthread_once_t n16_once[2] = {PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT};
static void n16_sign(uint16_t *t) {
  for (int k = 0; k < TKB_NORMAL16_ENTRIES; k++)
    t[TKB_NORMAL16_ENTRIES + k] = (uint16_t)(t[k] | 0x8000u);
}
static void n16_build_bf16(void) {
  tkb_convert(tkb__normal16_table, TKB_FLOAT32, n16_bf16, TKB_BFLOAT16, TKB_NORMAL16_ENTRIES);
  n16_sign(n16_bf16);
}
static void n16_build_f16(void) {
  tkb_convert(tkb__normal16_table, TKB_FLOAT32, n16_f16, TKB_FLOAT16, TKB_NORMAL16_ENTRIES);
  n16_sign(n16_f16);
}

static const uint16_t *n16_rounded(tkb_dtype dt) {
  if (dt == TKB_BFLOAT16) {
    pthread_once(&n16_once[0], n16_build_bf16);
    return n16_bf16;
  }
  pthread_once(&n16_once[1], n16_build_f16);
  return n16_f16;
}

/* ------------------------------------------------------------------------------ */
/* Stores: values -> dtype                                                         */
/* ------------------------------------------------------------------------------ */

/* Values -> dtype with tkb_convert (vectorized; floats round through float32, as the
 * header's scalar conversions do; the integers here are already inside the dtype). */
static void store_f32(tkb_dtype dt, const float *restrict v, unsigned char *restrict dst,
                      int64_t n) {
  if (dt == TKB_FLOAT32) memcpy(dst, v, (size_t)n * 4);
  else tkb_convert(v, TKB_FLOAT32, dst, dt, (size_t)n);
}

static void store_int(tkb_dtype dt, const int64_t *restrict v, unsigned char *restrict dst,
                      int64_t n) {
  if (dt == TKB_INT64) memcpy(dst, v, (size_t)n * 8);
  else tkb_convert(v, TKB_INT64, dst, dt, (size_t)n);
}

/* ------------------------------------------------------------------------------ */
/* Driver                                                                          */
/* ------------------------------------------------------------------------------ */

/* Fills elements [s, e) of block b (s, e inside the block) of the array at base. */
static void fill_block(const tkb__fill_kernels *k, const fill_plan *p, unsigned char *base,
                       int64_t b, int64_t s, int64_t e) {
  const int64_t per_blk = (int64_t)NB * p->per_ctr;
  const int64_t first = b * per_blk;
  const uint64_t c0 = (uint64_t)b * NB;
  unsigned char *dst = base + (size_t)s * p->esize;
  const int64_t off = s - first, n = e - s;
  switch (p->draw) {
  case DRAW_NORMAL32:
  case DRAW_UNIFORM32: {
    if (p->dtype == TKB_FLOAT32 && n == per_blk) {
      k->f32(p, c0, (float *)(void *)dst);
    } else {
      _Alignas(64) float v[4 * NB];
      k->f32(p, c0, v);
      store_f32(p->dtype, v + off, dst, n);
    }
  } break;
  case DRAW_NORMAL16: {
    if (!p->affine && (p->dtype == TKB_BFLOAT16 || p->dtype == TKB_FLOAT16)) {
      k->n16_rounded(p, c0, n16_rounded(p->dtype), off, n, (uint16_t *)(void *)dst);
      break;
    }
    _Alignas(64) float v[8 * NB];
    k->n16(p, c0, v);
    store_f32(p->dtype, v + off, dst, n);
  } break;
  case DRAW_NORMAL64:
  case DRAW_UNIFORM64: {
    if (n == per_blk) {
      k->f64(p, c0, (double *)(void *)dst);
    } else {
      _Alignas(64) double v[2 * NB];
      k->f64(p, c0, v);
      memcpy(dst, v + off, (size_t)n * 8);
    }
  } break;
  case DRAW_RANGE32:
  case DRAW_RANGE64: {
    _Alignas(64) int64_t v[4 * NB];
    k->ints(p, c0, v);
    store_int(p->dtype, v + off, dst, n);
  } break;
  default: break;
  }
}

static void fill_constant(const fill_plan *p, unsigned char *base, int64_t n) {
  const size_t es = p->esize;
  const int64_t chunk = 1 << 16;
  const int64_t nchunk = (n + chunk - 1) / chunk;
  uint16_t c16;
  uint32_t c32;
  uint64_t c64;
  memcpy(&c16, p->cbytes, 2);
  memcpy(&c32, p->cbytes, 4);
  memcpy(&c64, p->cbytes, 8);
#pragma omp parallel for schedule(static) if (nchunk > 1)
  for (int64_t c = 0; c < nchunk; c++) {
    int64_t s = c * chunk, e = s + chunk < n ? s + chunk : n;
    unsigned char *d = base + (size_t)s * es;
    int64_t m = e - s;
    if (es == 1) {
      memset(d, p->cbytes[0], (size_t)m);
    } else if (es == 2) {
      for (int64_t i = 0; i < m; i++) memcpy(d + 2 * i, &c16, 2);
    } else if (es == 4) {
      for (int64_t i = 0; i < m; i++) memcpy(d + 4 * i, &c32, 4);
    } else {
      for (int64_t i = 0; i < m; i++) memcpy(d + 8 * i, &c64, 8);
    }
  }
}

static tkb_status run_callback(tkb_array *a, const tkb_init *init, uint64_t seed,
                               uint64_t stream, const tkb_args *call) {
  tkb_init_ctx ctx = {.seed = seed, .stream = stream, .call = call, .user = init->user};
  tkb__clear_error();
  tkb_status st = init->callback(a, &ctx);
  if (st != TKB_OK && tkb_last_error()[0] == '\0')
    return tkb_set_error(st, "init CALLBACK returned %s without a message",
                         tkb_status_name(st));
  return st;
}

tkb_status tkb__fill_cpu(tkb_array *a, const tkb_init *init, uint64_t seed,
                         uint64_t stream) {
  fill_plan p;
  tkb_status st = tkb__make_fill_plan(a, init, seed, stream, &p);
  if (st != TKB_OK) return st;
  if (init && init->kind == TKB_INIT_CALLBACK)
    return run_callback(a, init, seed, stream, NULL);
  const int64_t n = a->numel;
  if (n == 0) return TKB_OK;
  unsigned char *base = a->data;
  if (p.draw == DRAW_CONSTANT) {
    fill_constant(&p, base, n);
    return TKB_OK;
  }
  const int64_t per_blk = (int64_t)NB * p.per_ctr;
  const int64_t nblk = (n + per_blk - 1) / per_blk;
  const tkb__fill_kernels *k = TKB_ISA_PICK(tkb__fill_kernels, tkb__cpu_isa());
  /* Any split of the blocks gives the same bytes: each block depends only on its
   * counters. Chunks of 16 blocks (32 KiB of float32) handed out dynamically, so a
   * thread that loses its core to another process does not hold up the others. */
#pragma omp parallel for schedule(dynamic, 16) if (nblk >= PARALLEL_MIN_BLOCKS)
  for (int64_t b = 0; b < nblk; b++) {
    int64_t s = b * per_blk, e = s + per_blk < n ? s + per_blk : n;
    fill_block(k, &p, base, b, s, e);
  }
  return TKB_OK;
}

/* A user's callback writes host memory through a->data, which on an accelerator is a
 * device handle: it fills a cpu array of the same spec, whose bytes are then copied
 * onto the device. */
static tkb_status run_callback_on_device(tkb_array *a, const tkb_init *init, uint64_t seed,
                                         uint64_t stream, const tkb_args *call) {
  tkb_array *h = NULL;
  tkb_status st = tkb_array_new(tkb__cpu_device(), &a->spec, &h);
  if (!st) st = run_callback(h, init, seed, stream, call);
  if (!st) st = tkb_array_copy_into(a, h);
  tkb_array_free(h);
  return st;
}

tkb_status tkb__fill_call(tkb_array *a, const tkb_init *init, uint64_t seed,
                          uint64_t stream, const tkb_args *call) {
  tkb__clear_error();
  fill_plan p;
  tkb_status st = tkb__make_fill_plan(a, init, seed, stream, &p);
  if (st != TKB_OK) return st;
  if (init && init->kind == TKB_INIT_CALLBACK)
    return tkb__host_array(a) ? run_callback(a, init, seed, stream, call)
                              : run_callback_on_device(a, init, seed, stream, call);
  if (a->numel == 0) return TKB_OK;
  if (!a->device) return tkb__fill_cpu(a, init, seed, stream);
  if (!a->device->backend || !a->device->backend->fill)
    return tkb_set_error(TKB_ERR_UNSUPPORTED,
                         "device \"%s\" cannot fill arrays (its backend has no fill)",
                         a->device->name);
  return a->device->backend->fill(a, init, seed, stream);
}

tkb_status tkb_fill(tkb_array *a, const tkb_init *init, uint64_t seed, uint64_t stream) {
  return tkb__fill_call(a, init, seed, stream, NULL);
}

void tkb_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]) {
  tkb_px_u32x4 c = {ctr[0], ctr[1], ctr[2], ctr[3]};
  tkb_px_u32x4 r = tkb_px_philox(c, key[0], key[1]);
  out[0] = r.x0;
  out[1] = r.x1;
  out[2] = r.x2;
  out[3] = r.x3;
}
