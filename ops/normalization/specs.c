/*
 * specs.c - normalization's declaration (ops/builtin.h): its implementations
 * ("reference": plain float64 loops; "cpu": the fast one; "opencl"; "cuda") and its suite
 * entries, Tokamax's alphafold arg specs (x bfloat16, scale and offset float32; tags
 * primary, ci_tests) and smaller ones of the same proportions tagged `cpu`, each in
 * every mode.
 */
#include "../builtin.h"
#include "norm.h"

typedef struct norm_spec {
  const char *name;
  tkb_spec x;
  int64_t axis;
  const char *tags;
} norm_spec;

#define X_BF16(...) TKB_SPEC_INIT(TKB_BFLOAT16, __VA_ARGS__)

static const norm_spec specs[] = {
    /* Tokamax (tokamax/_src/ops/normalization/arg_specs.py, project alphafold) */
    {"alphafold_384res_64chan", X_BF16(384, 384, 64), -1, "primary,ci_tests"},
    {"alphafold_384res_128chan", X_BF16(384, 384, 128), -1, "primary,ci_tests"},
    {"alphafold_768res_128chan", X_BF16(768, 768, 128), -1, "primary,ci_tests"},
    {"alphafold_384res_128chan_axis0", X_BF16(128, 384, 384), 0, "primary,ci_tests"},
    {"alphafold_768res_128chan_axis0", X_BF16(128, 768, 768), 0, "primary,ci_tests"},
    /* Same proportions, sized for a 2-core CPU run */
    {"cpu_96x96x64", X_BF16(96, 96, 64), -1, "cpu"},
    {"cpu_96x96x128", X_BF16(96, 96, 128), -1, "cpu"},
    {"cpu_32x96x96_axis0", X_BF16(32, 96, 96), 0, "cpu"},
};

#define N_SPECS (sizeof specs / sizeof specs[0])

/* Per spec: x, scale, offset positional; axis keyword. Static so entries can point at it. */
static tkb_value spec_args[N_SPECS][3];
static tkb_kwarg spec_kwargs[N_SPECS][1];

/* Counts. Forward reads x (and scale, offset) and writes y: about 8 flops per element
 * (two reductions, normalize, scale, shift). The vjp reads x, dy, the residuals and
 * writes dx, dscale, doffset: about 12 flops per element. */
static tkb_status norm_counts(const tkb_args *a, tkb_mode mode, tkb_counts *out) {
  const tkb_spec *x = tkb_args_spec(a, "x");
  int64_t numel;
  tkb_status st = tkb_spec_numel(x, &numel);
  if (st) return st;
  int axis = (int)tkb_args_int(a, "axis");
  if (axis < 0) axis += x->rank;
  double n = (double)x->shape[axis], rows = (double)numel / (n > 0 ? n : 1);
  double esize = (double)tkb_dtype_size(x->dtype), e = (double)numel;
  double fwd_bytes = 2 * e * esize, fwd_flops = 8 * e;
  double bwd_bytes = 3 * e * esize, bwd_flops = 12 * e;
  *out = (tkb_counts){.items = rows};
  switch (mode) {
    case TKB_MODE_FORWARD: out->bytes = fwd_bytes; out->flops = fwd_flops; break;
    case TKB_MODE_FORWARD_RES: out->bytes = fwd_bytes + 8 * rows; out->flops = fwd_flops; break;
    case TKB_MODE_VJP: out->bytes = bwd_bytes; out->flops = bwd_flops; break;
    case TKB_MODE_FORWARD_AND_VJP:
      out->bytes = fwd_bytes + bwd_bytes;
      out->flops = fwd_flops + bwd_flops;
      break;
  }
  return TKB_OK;
}

static tkb_status norm_specs(tkb__op_specs *out) {
  static const tkb_mode modes[] = {TKB_MODE_FORWARD, TKB_MODE_FORWARD_RES, TKB_MODE_VJP,
                                   TKB_MODE_FORWARD_AND_VJP};
  for (size_t s = 0; s < N_SPECS; s++) {
    int64_t n = specs[s].x.shape[specs[s].axis < 0 ? specs[s].x.rank + specs[s].axis : specs[s].axis];
    tkb_spec param = TKB_SPEC(TKB_FLOAT32, n);
    spec_args[s][0] = TKB_ABSTRACT(specs[s].x);
    spec_args[s][1] = TKB_ABSTRACT(param);
    spec_args[s][2] = TKB_ABSTRACT(param);
    spec_kwargs[s][0] = (tkb_kwarg){"axis", TKB_INT(specs[s].axis)};
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
      tkb_benchmark_def d = {
          .name = specs[s].name,
          .args = spec_args[s],
          .n_args = 3,
          .kwargs = spec_kwargs[s],
          .n_kwargs = 1,
          .mode = modes[m],
          .counts = norm_counts,
          .tags = specs[s].tags,
      };
      tkb_status st = tkb__op_add(out, &d);
      if (st) return st;
    }
  }
  return TKB_OK;
}

static const tkb__op_impl impls[] = {
    {"reference", &tkb_op_normalization_reference, "cpu"},
    {"cpu", &tkb_op_normalization, "cpu"},
    {"opencl", &tkb__op_normalization_opencl, "opencl"},
    {"cuda", &tkb__op_normalization_cuda, "cuda"},
};

const tkb__op_decl tkb__op_normalization = {"normalization", impls, TKB_ARRAY_LEN(impls), norm_specs};
