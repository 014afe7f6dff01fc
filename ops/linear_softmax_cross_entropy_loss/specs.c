/*
 * specs.c - linear_softmax_cross_entropy_loss's declaration (ops/builtin.h): its
 * implementations ("reference", "cpu", "opencl", "cuda") and its suite entries, Tokamax's
 * qwen3-8b arg specs and smaller ones of the same proportions tagged `cpu`, each in
 * every mode.
 *
 * Tokamax (tokamax/_src/ops/linear_softmax_cross_entropy_loss/arg_specs.py, project
 * qwen3-8b): x [B, 4096] (bfloat16 or float32), labels [B] int32, w [4096, 151936]
 * bfloat16, reduction mean or sum, for B in 1024, 2048, 4096, 16384, 32768, 131072;
 * tag primary on B = 1024, mean, bfloat16 only. Tokamax gives these specs no name of their
 * own (their full_name is the project, "qwen3-8b", for all 24), so each entry's name
 * appends what tells them apart: "qwen3-8b_1024x4096x151936_mean_bfloat16".
 *
 * Labels use a ranged initializer, uniform in [0, V): the default integer rule would give
 * values in [-128, 128), negative labels being out of range.
 */
#include "../builtin.h"
#include "lsce.h"

#include <stdio.h>

typedef struct lsce_spec {
  const char *prefix;  /* project or "cpu" */
  int64_t B, Hd, V;
  const char *reduction;
  tkb_dtype x_dtype;   /* w is always bfloat16 */
  const char *tags;
} lsce_spec;

#define QWEN(B, red, dt, tags) {"qwen3-8b", B, 4096, 151936, red, dt, tags}
#define QWEN_B(B)                          \
  QWEN(B, "mean", TKB_BFLOAT16, ""),       \
  QWEN(B, "mean", TKB_FLOAT32, ""),        \
  QWEN(B, "sum", TKB_BFLOAT16, ""),        \
  QWEN(B, "sum", TKB_FLOAT32, "")

static const lsce_spec specs[] = {
    /* Tokamax qwen3-8b, in arg_specs.py's order (B, then reduction, then x dtype) */
    QWEN(1024, "mean", TKB_BFLOAT16, "primary"),
    QWEN(1024, "mean", TKB_FLOAT32, ""),
    QWEN(1024, "sum", TKB_BFLOAT16, ""),
    QWEN(1024, "sum", TKB_FLOAT32, ""),
    QWEN_B(2048),
    QWEN_B(4096),
    QWEN_B(16384),
    QWEN_B(32768),
    QWEN_B(131072),
    /* The primary spec's proportions (B : Hd : V = 1024 : 4096 : 151936) at 1/16 and
     * 1/32, sized for a 2-core CPU: a cpu forward takes a few ms, and the float64
     * reference's forward_and_vjp (what `make run` times 30 times plus warm-ups) about
     * 0.1 s and 0.02 s. */
    {"cpu", 64, 256, 9496, "mean", TKB_BFLOAT16, "cpu"},
    {"cpu", 32, 128, 4748, "sum", TKB_FLOAT32, "cpu"},
};

#define N_SPECS (sizeof specs / sizeof specs[0])

/* Per spec: x, labels, w positional; reduction keyword; labels' initializer. Static so
 * the entries can point at them. */
static tkb_value spec_args[N_SPECS][3];
static tkb_kwarg spec_kwargs[N_SPECS][1];
static tkb_init label_init[N_SPECS];

/*
 * Counts. flops are the matrix products' (2 B Hd V each): one in the forward, three in
 * the vjp (logits recomputed, dx, dw); the softmax's O(B V) is left out. bytes: the
 * operands read and results written once. items: tokens (rows of x).
 */
static tkb_status lsce_counts(const tkb_args *a, tkb_mode mode, tkb_counts *out) {
  const tkb_spec *x = tkb_args_spec(a, "x"), *w = tkb_args_spec(a, "w");
  if (!x || !w || x->rank != 2 || w->rank != 2)
    return tkb_set_error(TKB_ERR_BAD_SHAPE, "linear_softmax_cross_entropy_loss counts: x and "
                         "w must be rank-2 arrays");
  const double B = (double)x->shape[0], Hd = (double)x->shape[1], V = (double)w->shape[1];
  const double gemm = 2 * B * Hd * V;
  const double xb = B * Hd * (double)tkb_dtype_size(x->dtype);
  const double wb = Hd * V * (double)tkb_dtype_size(w->dtype);
  const double fwd_bytes = xb + wb + 4 * B + 4, res_bytes = 4 * B;
  const double vjp_bytes = 2 * xb + 2 * wb + 4 * B + res_bytes + 4;
  *out = (tkb_counts){.items = B};
  switch (mode) {
    case TKB_MODE_FORWARD: out->flops = gemm; out->bytes = fwd_bytes; break;
    case TKB_MODE_FORWARD_RES: out->flops = gemm; out->bytes = fwd_bytes + res_bytes; break;
    case TKB_MODE_VJP: out->flops = 3 * gemm; out->bytes = vjp_bytes; break;
    case TKB_MODE_FORWARD_AND_VJP:
      out->flops = 4 * gemm;
      out->bytes = fwd_bytes + res_bytes + vjp_bytes;
      break;
  }
  return TKB_OK;
}

static tkb_status lsce_specs(tkb__op_specs *out) {
  static const tkb_mode modes[] = {TKB_MODE_FORWARD, TKB_MODE_FORWARD_RES, TKB_MODE_VJP,
                                   TKB_MODE_FORWARD_AND_VJP};
  for (size_t s = 0; s < N_SPECS; s++) {
    const lsce_spec *sp = &specs[s];
    char name[128];
    snprintf(name, sizeof name, "%s_%lldx%lldx%lld_%s_%s", sp->prefix, (long long)sp->B,
             (long long)sp->Hd, (long long)sp->V, sp->reduction, tkb_dtype_name(sp->x_dtype));
    label_init[s] = (tkb_init){.kind = TKB_INIT_INT_RANGE, .a = 0, .b = (double)sp->V};
    spec_args[s][0] = TKB_ABSTRACT(TKB_SPEC(sp->x_dtype, sp->B, sp->Hd));
    spec_args[s][1] = TKB_ABSTRACT_INIT(TKB_SPEC(TKB_INT32, sp->B), &label_init[s]);
    spec_args[s][2] = TKB_ABSTRACT(TKB_SPEC(TKB_BFLOAT16, sp->Hd, sp->V));
    spec_kwargs[s][0] = (tkb_kwarg){"reduction", TKB_STRING(sp->reduction)};
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
      tkb_benchmark_def d = {
          .name = name,
          .args = spec_args[s],
          .n_args = 3,
          .kwargs = spec_kwargs[s],
          .n_kwargs = 1,
          .mode = modes[m],
          .counts = lsce_counts,
          .tags = sp->tags,
      };
      tkb_status st = tkb__op_add(out, &d);
      if (st) return st;
    }
  }
  return TKB_OK;
}

static const tkb__op_impl impls[] = {
    {"reference", &tkb_op_linear_softmax_cross_entropy_loss_reference, "cpu"},
    {"cpu", &tkb_op_linear_softmax_cross_entropy_loss, "cpu"},
    {"opencl", &tkb__op_linear_softmax_cross_entropy_loss_opencl, "opencl"},
    {"cuda", &tkb__op_linear_softmax_cross_entropy_loss_cuda, "cuda"},
};

const tkb__op_decl tkb__op_linear_softmax_cross_entropy_loss = {
    "linear_softmax_cross_entropy_loss", impls, TKB_ARRAY_LEN(impls), lsce_specs};
