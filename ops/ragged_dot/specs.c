/*
 * specs.c - ragged_dot's declaration (ops/builtin.h): its implementations
 * ("reference", "cpu", "opencl", "cuda") and its suite entries:
 *
 *  - Tokamax's specs (tokamax/_src/ops/ragged_dot/arg_specs.py), under Tokamax's full
 *    names ("{project}_{name}"): maxtext's deepseek-v3 (tag primary) and gpt-oss
 *    (untagged) shapes with random group sizes, and compute_bound, memory_bound (fixed
 *    sizes) and mixtral_8x7b (random sizes), tagged primary and ci_tests. All bfloat16.
 *  - Smaller specs of the same proportions tagged `cpu` (each forward well under a
 *    second on 2 cores, both implementations).
 * Every spec is registered in all four modes. group_sizes gets its own initializer (group_sizes.c): the spec's fixed sizes,
 * or a seeded random composition of M into G parts as Tokamax's generate_group_sizes.
 */
#include "../builtin.h"
#include "ragged_dot.h"

#include <stdio.h>

typedef struct rd_shape {
  const char *name;      /* full name */
  int64_t g, m, n, k;    /* arg_specs.py's order: num_groups, m, n, k */
  const int32_t *fixed;  /* the spec's group sizes, or NULL for random ones */
  const char *tags;
} rd_shape;

static const int32_t compute_bound_sizes[8] = {4096, 0, 0, 0, 0, 0, 0, 0};
static const int32_t memory_bound_sizes[8] = {1, 1, 1, 1, 1, 1, 1, 1};
static const int32_t cpu_compute_bound_sizes[8] = {512, 0, 0, 0, 0, 0, 0, 0};

#define DS(g, m, n, k) {"maxtext_deepseek-v3-" #m "x" #k "_" #g "x" #k "x" #n, g, m, n, k, NULL, "primary"}
#define GO(g, m, n, k) {"maxtext_gpt-oss-" #m "x" #k "_" #g "x" #k "x" #n, g, m, n, k, NULL, ""}

static const rd_shape shapes[] = {
    DS(256, 131072, 1024, 7168), DS(256, 131072, 7168, 1024), DS(256, 131072, 512, 7168),
    DS(256, 131072, 7168, 512),  DS(256, 262144, 512, 7168),  DS(256, 262144, 7168, 256),
    DS(256, 262144, 7168, 1024), DS(256, 262144, 1024, 7168), DS(256, 262144, 2048, 7168),
    GO(128, 327680, 2880, 2880), GO(128, 393216, 768, 2048),  GO(128, 393216, 2048, 768),
    GO(128, 524288, 1536, 4096), GO(128, 524288, 4096, 1536), GO(256, 524288, 2048, 7168),
    GO(128, 262144, 1536, 4096), GO(128, 262144, 4096, 1536), GO(128, 131072, 2048, 7168),
    GO(128, 131072, 768, 2048),  GO(128, 131072, 1536, 4096), GO(128, 131072, 4096, 1536),
    GO(256, 131072, 2048, 7168), GO(256, 65536, 2048, 7168),  GO(256, 131072, 512, 7168),
    GO(256, 131072, 7168, 512),  GO(256, 262144, 7168, 512),  GO(256, 262144, 512, 7168),
    GO(256, 262144, 7168, 256),  GO(256, 262144, 7168, 1024), GO(256, 262144, 1024, 7168),
    {"compute_bound", 8, 4096, 4096, 4096, compute_bound_sizes, "primary,ci_tests"},
    {"memory_bound", 8, 8, 4096, 4096, memory_bound_sizes, "primary,ci_tests"},
    {"mixtral_8x7b", 8, 8192, 14336, 4096, NULL, "primary,ci_tests"},
    /* Same proportions, sized for a 2-core CPU. memory_bound keeps rhs (64 MiB) above
     * the last-level cache so it stays bound by memory. */
    {"cpu_compute_bound", 8, 512, 512, 512, cpu_compute_bound_sizes, "cpu"},
    {"cpu_memory_bound", 8, 8, 2048, 2048, memory_bound_sizes, "cpu"},
    {"cpu_mixtral_8x7b", 8, 256, 896, 256, NULL, "cpu"},
    {"cpu_maxtext_deepseek-v3-2048x448_16x448x64", 16, 2048, 64, 448, NULL, "cpu"},
};

#define N_SPECS (sizeof shapes / sizeof shapes[0])

/* Per spec: lhs, rhs, group_sizes positional, group_sizes' initializer and its M;
 * static so entries can point at them. */
static tkb_value spec_args[N_SPECS][3];
static tkb_init spec_inits[N_SPECS];
static int64_t spec_m[N_SPECS];

static tkb_status rd_specs(tkb__op_specs *out) {
  static const tkb_mode modes[] = {TKB_MODE_FORWARD, TKB_MODE_FORWARD_RES, TKB_MODE_VJP,
                                   TKB_MODE_FORWARD_AND_VJP};
  for (size_t s = 0; s < N_SPECS; s++) {
    const rd_shape *sh = &shapes[s];
    spec_m[s] = sh->m;
    spec_inits[s] = sh->fixed ? TKB_INIT_CALLBACK_(tkb__rd_init_fixed_groups, (void *)sh->fixed)
                              : TKB_INIT_CALLBACK_(tkb__rd_init_random_groups, &spec_m[s]);
    spec_args[s][0] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, sh->m, sh->k));
    spec_args[s][1] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, sh->g, sh->k, sh->n));
    spec_args[s][2] = TKB_ABSTRACT_INIT(TKB_SPEC(TKB_INT32, sh->g), &spec_inits[s]);
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
      tkb_benchmark_def d = {
          .name = sh->name,
          .args = spec_args[s],
          .n_args = 3,
          .mode = modes[m],
          .counts = tkb__rd_counts,
          .tags = sh->tags,
      };
      tkb_status st = tkb__op_add(out, &d);
      if (st) return st;
    }
  }
  return TKB_OK;
}

static const tkb__op_impl impls[] = {
    {"reference", &tkb_op_ragged_dot_reference, "cpu"},
    {"cpu", &tkb_op_ragged_dot, "cpu"},
    {"opencl", &tkb__op_ragged_dot_opencl, "opencl"},
    {"cuda", &tkb__op_ragged_dot_cuda, "cuda"},
};

const tkb__op_decl tkb__op_ragged_dot = {"ragged_dot", impls, TKB_ARRAY_LEN(impls), rd_specs};
