/*
 * group_sizes.c - ragged_dot's group sizes: the check every call makes on concrete
 * sizes, and the two initializers the suite uses (the default integer rule would give
 * negative sizes that do not sum to M).
 */
#include "ragged_dot.h"

#include <string.h>

tkb_status tkb__rd_check_group_sizes(const rd_plan *p, const int32_t *sizes) {
  char lb[160], gb[160];
  int64_t sum = 0;
  for (int64_t g = 0; g < p->g; g++) {
    if (sizes[g] < 0) {
      tkb_spec_format(&p->lhs, lb, sizeof lb);
      tkb_spec_format(&p->gs, gb, sizeof gb);
      return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                           "ragged_dot: group_sizes[%lld] = %d is negative (group_sizes is "
                           "%s, lhs is %s); group sizes must be >= 0 and sum to M = %lld",
                           (long long)g, (int)sizes[g], gb, lb, (long long)p->m);
    }
    sum += sizes[g];
  }
  if (sum != p->m) {
    tkb_spec_format(&p->lhs, lb, sizeof lb);
    tkb_spec_format(&p->gs, gb, sizeof gb);
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "ragged_dot: group_sizes (%s) sum to %lld but lhs (%s) has M = %lld "
                         "rows; the group sizes must sum to M",
                         gb, (long long)sum, lb, (long long)p->m);
  }
  return TKB_OK;
}

/* The int32[G] array an initializer fills, checked. */
static tkb_status check_target(const tkb_array *a, const char *who) {
  if (!a || a->spec.dtype != TKB_INT32 || a->spec.rank != 1 || (!a->data && a->nbytes))
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "ragged_dot %s initializer: the array must be a concrete int32[G] "
                         "(group_sizes)", who);
  return TKB_OK;
}

tkb_status tkb__rd_init_random_groups(tkb_array *a, const tkb_init_ctx *ctx) {
  tkb_status st = check_target(a, "random group sizes");
  if (st != TKB_OK) return st;
  const tkb_spec *lhs = ctx->call ? tkb_args_spec(ctx->call, "lhs") : NULL;
  int64_t m;
  if (lhs && lhs->rank >= 1) m = lhs->shape[0];
  else if (ctx->user) m = *(const int64_t *)ctx->user;
  else
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "ragged_dot random group sizes initializer: M is unknown (no bound "
                         "call with lhs, and no int64 M in the initializer's user pointer)");
  const int64_t G = a->spec.shape[0];
  int32_t *sizes = a->data;
  memset(sizes, 0, (size_t)G * sizeof *sizes);
  if (G == 0) {
    if (m != 0)
      return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                           "ragged_dot random group sizes initializer: %lld rows cannot go "
                           "into 0 groups", (long long)m);
    return TKB_OK;
  }
  if (m > INT32_MAX)
    return tkb_set_error(TKB_ERR_OVERFLOW,
                         "ragged_dot random group sizes initializer: M = %lld rows do not "
                         "fit int32 group sizes", (long long)m);
  /* Row i joins group floor(w * G / 2^32), w = word i % 4 of draw i / 4. */
  const uint32_t key[2] = {(uint32_t)ctx->seed, (uint32_t)(ctx->seed >> 32)};
  for (int64_t c = 0; c * 4 < m; c++) {
    const uint32_t ctr[4] = {(uint32_t)c, (uint32_t)((uint64_t)c >> 32), (uint32_t)ctx->stream,
                             (uint32_t)(ctx->stream >> 32)};
    uint32_t w[4];
    tkb_philox4x32_10(ctr, key, w);
    for (int j = 0; j < 4 && c * 4 + j < m; j++)
      sizes[((uint64_t)w[j] * (uint64_t)G) >> 32]++;
  }
  return TKB_OK;
}

tkb_status tkb__rd_init_fixed_groups(tkb_array *a, const tkb_init_ctx *ctx) {
  tkb_status st = check_target(a, "fixed group sizes");
  if (st != TKB_OK) return st;
  if (!ctx->user)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT,
                         "ragged_dot fixed group sizes initializer: user must point at the "
                         "G int32 sizes");
  memcpy(a->data, ctx->user, (size_t)a->spec.shape[0] * sizeof(int32_t));
  return TKB_OK;
}
