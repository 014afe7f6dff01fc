/*
 * specs.c - dot_product_attention's declaration (ops/builtin.h): its
 * implementations ("reference", "cpu", "opencl", "cuda") and its suite entries:
 *
 *  - Tokamax's specs (tokamax/_src/ops/attention/arg_specs.py) under their full names
 *    ("{project}_{name}") and tags: mixtral 8x7b and deepseek2 16b (causal; primary,
 *    ci_tests), alphafold with bias and mask, and the flash_attention_v3 sweep (16384
 *    tokens, hidden 2048, seq_len 512..16384, head_dim 64/128/256, causal or not,
 *    bfloat16 or float16) whose names hold '=', written '-' here: the one character
 *    of them the registry does not accept. (arg_specs.py's alphafold_3 inference
 *    specs, vmapped and tagged forward_only, are not among the specs tkbench ships and
 *    are not registered.)
 *  - Smaller specs of the same proportions tagged `cpu` (each forward under a ms for
 *    `cpu` and ~10 ms for `reference` on 2 cores).
 * Every spec is registered in all four modes; reference entries of the Tokamax-sized
 * specs exist but would take hours.
 * The bool masks use the default initializer (a fair coin per element), as Tokamax.
 */
#include "attention.h"
#include "../builtin.h"

#include <stdio.h>

typedef struct attn_spec {
  const char *name;
  const char *tags;
  tkb_dtype dtype;
  int64_t B, T, S, H, Hk, D, Dv;
  bool causal;
  bool bias_mask; /* alphafold: bias [1, H, T, S] in dtype and mask [B, 1, 1, S] bool */
} attn_spec;

#define BF16 TKB_BFLOAT16

/* {name, tags, dtype, B, T, S, H, Hk, D, Dv, causal, bias_mask} */
static const attn_spec fixed_specs[] = {
    /* Tokamax */
    {"mixtral_8x7b_bf16", "primary,ci_tests", BF16, 32, 4096, 4096, 32, 8, 128, 128, true, false},
    {"deepseek2_16b_bf16", "primary,ci_tests", BF16, 512, 1024, 1024, 16, 16, 192, 128, true, false},
    {"alphafold_384x384x4x32", "", BF16, 384, 384, 384, 4, 4, 32, 32, false, true},
    {"alphafold_384x384x4x64", "primary", BF16, 384, 384, 384, 4, 4, 64, 64, false, true},
    {"alphafold_768x768x4x64", "primary", BF16, 768, 768, 768, 4, 4, 64, 64, false, true},
    /* Same proportions for a 2-core CPU: 30-70 MFLOP per forward (the float64
     * reference takes tens of ms, `make run` times both implementations) */
    {"cpu_mixtral_8x7b_bf16", "cpu", BF16, 1, 128, 128, 8, 2, 128, 128, true, false},
    {"cpu_deepseek2_16b_bf16", "cpu", BF16, 1, 192, 192, 4, 4, 192, 128, true, false},
    {"cpu_alphafold_40x40x4x32", "cpu", BF16, 40, 40, 40, 4, 4, 32, 32, false, true},
    {"cpu_alphafold_40x40x4x64", "cpu", BF16, 40, 40, 40, 4, 4, 64, 64, false, true},
    /* flash_attention_v3 proportions: 256 tokens, hidden 256, seq_len 256 */
    {"cpu_flash_attention_v3_seq_len-256_head_dim-64_causal-False_dtype-bfloat16", "cpu", BF16,
     1, 256, 256, 4, 4, 64, 64, false, false},
    {"cpu_flash_attention_v3_seq_len-256_head_dim-64_causal-True_dtype-float16", "cpu",
     TKB_FLOAT16, 1, 256, 256, 4, 4, 64, 64, true, false},
};
#define N_FIXED (sizeof fixed_specs / sizeof fixed_specs[0])

/* flash_attention_v3: 6 seq_lens x 3 head_dims x 2 causal x 2 dtypes */
#define N_FA3 (6 * 3 * 2 * 2)
#define N_SPECS (N_FIXED + N_FA3)

static attn_spec fa3_specs[N_FA3];
static char fa3_names[N_FA3][96];

static void make_fa3_specs(void) {
  static const int64_t seq_lens[] = {512, 1024, 2048, 4096, 8192, 16384};
  static const int64_t head_dims[] = {64, 128, 256};
  static const tkb_dtype dtypes[] = {TKB_BFLOAT16, TKB_FLOAT16};
  const int64_t num_tokens = 16384, hidden = 2048;
  size_t i = 0;
  for (int a = 0; a < 6; a++)
    for (int d = 0; d < 3; d++)
      for (int c = 1; c >= 0; c--) /* Tokamax's order: causal True, then False */
        for (int t = 0; t < 2; t++, i++) {
          int64_t T = seq_lens[a], hd = head_dims[d], H = hidden / hd;
          snprintf(fa3_names[i], sizeof fa3_names[i],
                   "flash_attention_v3_seq_len-%lld_head_dim-%lld_causal-%s_dtype-%s",
                   (long long)T, (long long)hd, c ? "True" : "False", tkb_dtype_name(dtypes[t]));
          fa3_specs[i] = (attn_spec){fa3_names[i], "", dtypes[t], num_tokens / T, T, T, H, H,
                                     hd, hd, c != 0, false};
        }
}

/* Per spec: q, k, v, bias, mask positional; is_causal keyword. Static so that entries
 * can point at them. */
static tkb_value spec_args[N_SPECS][5];
static tkb_kwarg spec_kwargs[N_SPECS][1];

static tkb_status add_spec(tkb__op_specs *out, size_t i, const attn_spec *s) {
  static const tkb_mode modes[] = {TKB_MODE_FORWARD, TKB_MODE_FORWARD_RES, TKB_MODE_VJP,
                                   TKB_MODE_FORWARD_AND_VJP};
  tkb_value *v = spec_args[i];
  v[0] = TKB_ABSTRACT(TKB_SPEC(s->dtype, s->B, s->T, s->H, s->D));
  v[1] = TKB_ABSTRACT(TKB_SPEC(s->dtype, s->B, s->S, s->Hk, s->D));
  v[2] = TKB_ABSTRACT(TKB_SPEC(s->dtype, s->B, s->S, s->Hk, s->Dv));
  v[3] = s->bias_mask ? TKB_ABSTRACT(TKB_SPEC(s->dtype, 1, s->H, s->T, s->S)) : TKB_NONE;
  v[4] = s->bias_mask ? TKB_ABSTRACT(TKB_SPEC(TKB_BOOL, s->B, 1, 1, s->S)) : TKB_NONE;
  spec_kwargs[i][0] = (tkb_kwarg){"is_causal", TKB_BOOL(s->causal)};
  for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
    tkb_benchmark_def d = {
        .name = s->name,
        .args = v,
        .n_args = 5,
        .kwargs = spec_kwargs[i],
        .n_kwargs = 1,
        .mode = modes[m],
        .counts = tkb__attn_counts,
        .tags = s->tags,
    };
    tkb_status st = tkb__op_add(out, &d);
    if (st) return st;
  }
  return TKB_OK;
}

static tkb_status attn_specs(tkb__op_specs *out) {
  make_fa3_specs();
  for (size_t i = 0; i < N_FIXED; i++) {
    tkb_status st = add_spec(out, i, &fixed_specs[i]);
    if (st) return st;
  }
  for (size_t i = 0; i < N_FA3; i++) {
    tkb_status st = add_spec(out, N_FIXED + i, &fa3_specs[i]);
    if (st) return st;
  }
  return TKB_OK;
}

static const tkb__op_impl impls[] = {
    {"reference", &tkb_op_dot_product_attention_reference, "cpu"},
    {"cpu", &tkb_op_dot_product_attention, "cpu"},
    {"opencl", &tkb__op_dot_product_attention_opencl, "opencl"},
    {"cuda", &tkb__op_dot_product_attention_cuda, "cuda"},
};

const tkb__op_decl tkb__op_dot_product_attention = {"dot_product_attention", impls,
                                                    TKB_ARRAY_LEN(impls), attn_specs};
