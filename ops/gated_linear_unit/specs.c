/*
 * specs.c - gated_linear_unit's declaration (ops/builtin.h): its implementations
 * ("reference", "cpu", "opencl", "cuda") and its suite entries:
 *
 *  - Tokamax's alphafold_3 inference specs (tokamax/_src/ops/gated_linear_unit/
 *    arg_specs.py): for batch in 512..5120 step 256, fifteen shapes each, tag
 *    forward_only, so only the forward mode is registered. Their names are Tokamax's
 *    full names ("{project}_{name}") with '=' written as '-', the one character of
 *    them the registry does not accept in a name. A vmapped spec (vmap_size 1 or 5)
 *    becomes x with that leading batch axis (weights are not vmapped), which the op
 *    takes as extra leading dims.
 *  - Smaller specs of the same proportions tagged `cpu` (each forward well under a
 *    second on 2 cores, both implementations), registered in every mode.
 */
#include "../builtin.h"
#include "gated_linear_unit.h"

#include <stdio.h>
#include <string.h>

/* One spec, as Tokamax's _alphafold_oss_inference_spec takes it (0 means None). */
typedef struct glu_shape {
  int64_t batch_1, batch_2, n_in, n_out, vmap_size;
  glu_activation act;
  tkb_dtype dtype;
} glu_shape;

/* The fifteen shapes of one Tokamax batch, in arg_specs.py's order. */
static glu_shape tokamax_shape(int64_t b, int i) {
  const tkb_dtype bf = TKB_BFLOAT16, f32 = TKB_FLOAT32;
  const glu_activation silu = GLU_ACT_SILU, sig = GLU_ACT_SIGMOID;
  const glu_shape s[15] = {
      {b, b, 128, 256, 1, sig, bf},    {b, b, 128, 512, 1, silu, bf},
      {b, b, 128, 256, 0, sig, bf},    {b, b, 128, 512, 0, silu, bf},
      {b, b, 128, 256, 0, silu, f32},  {b, b, 64, 128, 0, sig, bf},
      {b, b, 64, 128, 0, silu, bf},    {b, 32, 128, 256, 5, silu, f32},
      {b, 32, 128, 256, 0, silu, f32}, {b, 0, 384, 1536, 5, silu, bf},
      {b, 0, 384, 1536, 0, silu, bf},  {b, 0, 384, 768, 5, silu, f32},
      {b, 0, 384, 768, 0, silu, f32},  {b, 0, 768, 1536, 5, silu, f32},
      {b, 0, 768, 1536, 0, silu, f32},
  };
  return s[i];
}

#define N_BATCHES 19 /* 512, 768, ..., 5120 */
#define N_TOKAMAX (N_BATCHES * 15)

/* Same proportions, sized for a 2-core CPU (0.2-0.3 GFLOP per forward). */
static const glu_shape cpu_shapes[] = {
    {40, 40, 128, 256, 1, GLU_ACT_SIGMOID, TKB_BFLOAT16},
    {32, 32, 128, 512, 0, GLU_ACT_SILU, TKB_BFLOAT16},
    {12, 32, 128, 256, 5, GLU_ACT_SILU, TKB_FLOAT32},
    {96, 0, 384, 1536, 0, GLU_ACT_SILU, TKB_BFLOAT16},
    {64, 0, 768, 1536, 0, GLU_ACT_SILU, TKB_FLOAT32},
};
#define N_CPU (sizeof cpu_shapes / sizeof cpu_shapes[0])
#define N_SPECS (N_TOKAMAX + N_CPU)

/* Per spec: x and weights positional, activation keyword; static so entries can point
 * at them. */
static tkb_value spec_args[N_SPECS][2];
static tkb_kwarg spec_kwargs[N_SPECS][1];

/* Appends s at p, never past end (the NUL included); returns the new end. Names are
 * made by hand, not by snprintf: they are made anew at every start of every program
 * (three times: once per device kind), and printf is most of that cost. */
static char *cat(char *p, const char *end, const char *s) {
  size_t n = strlen(s);
  if (n > (size_t)(end - p) - 1) n = (size_t)(end - p) - 1;
  memcpy(p, s, n);
  p[n] = '\0';
  return p + n;
}

/* Appends v in decimal, or "None" for 0 when `none` (Tokamax's None). */
static char *cat_int(char *p, const char *end, int64_t v, bool none) {
  if (none && v == 0) return cat(p, end, "None");
  char digits[24], *d = digits + sizeof digits;
  uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
  *--d = '\0';
  do *--d = (char)('0' + u % 10);
  while ((u /= 10) != 0);
  if (v < 0) *--d = '-';
  return cat(p, end, d);
}

/* Tokamax's name for a shape, prefixed, with '=' written as '-'. */
static void shape_name(const glu_shape *s, const char *prefix, char *out, size_t cap) {
  const char *end = out + cap;
  char *p = cat(out, end, prefix);
  p = cat_int(cat(p, end, "batch_1-"), end, s->batch_1, false);
  p = cat_int(cat(p, end, "_batch_2-"), end, s->batch_2, true);
  p = cat_int(cat(p, end, "_n_in-"), end, s->n_in, false);
  p = cat_int(cat(p, end, "_n_out-"), end, s->n_out, false);
  p = cat_int(cat(p, end, "_vmap_size-"), end, s->vmap_size, true);
  p = cat(cat(p, end, "_activation-"), end, tkb__glu_activation_name(s->act));
  cat(cat(p, end, "_dtype-"), end, tkb_dtype_name(s->dtype));
}

/* x [vmap?, batch_1, batch_2?, n_in] and weights [n_in, 2, n_out]. */
static void shape_args(const glu_shape *s, tkb_value *args, tkb_kwarg *kw) {
  tkb_spec x = {.dtype = s->dtype};
  if (s->vmap_size) x.shape[x.rank++] = s->vmap_size;
  x.shape[x.rank++] = s->batch_1;
  if (s->batch_2) x.shape[x.rank++] = s->batch_2;
  x.shape[x.rank++] = s->n_in;
  args[0] = TKB_ABSTRACT(x);
  args[1] = TKB_ABSTRACT(TKB_SPEC(s->dtype, s->n_in, 2, s->n_out));
  kw[0] = (tkb_kwarg){"activation", TKB_STRING(tkb__glu_activation_name(s->act))};
}

static tkb_status add_spec(tkb__op_specs *out, size_t i, const glu_shape *s, const char *prefix,
                           const char *tags, bool forward_only) {
  static const tkb_mode modes[] = {TKB_MODE_FORWARD, TKB_MODE_FORWARD_RES, TKB_MODE_VJP,
                                   TKB_MODE_FORWARD_AND_VJP};
  char name[256];
  shape_name(s, prefix, name, sizeof name);
  shape_args(s, spec_args[i], spec_kwargs[i]);
  for (size_t m = 0; m < (forward_only ? 1 : sizeof modes / sizeof modes[0]); m++) {
    tkb_benchmark_def d = {
        .name = name,
        .args = spec_args[i],
        .n_args = 2,
        .kwargs = spec_kwargs[i],
        .n_kwargs = 1,
        .mode = modes[m],
        .counts = tkb__glu_counts,
        .tags = tags,
    };
    tkb_status st = tkb__op_add(out, &d);
    if (st) return st;
  }
  return TKB_OK;
}

static tkb_status glu_specs(tkb__op_specs *out) {
  size_t i = 0;
  for (int b = 0; b < N_BATCHES; b++)
    for (int k = 0; k < 15; k++, i++) {
      glu_shape s = tokamax_shape(512 + 256 * (int64_t)b, k);
      tkb_status st = add_spec(out, i, &s, "alphafold_3_", "forward_only", true);
      if (st) return st;
    }
  for (size_t c = 0; c < N_CPU; c++, i++) {
    tkb_status st = add_spec(out, i, &cpu_shapes[c], "cpu_alphafold_3_", "cpu", false);
    if (st) return st;
  }
  return TKB_OK;
}

static const tkb__op_impl impls[] = {
    {"reference", &tkb_op_gated_linear_unit_reference, "cpu"},
    {"cpu", &tkb_op_gated_linear_unit, "cpu"},
    {"opencl", &tkb__op_gated_linear_unit_opencl, "opencl"},
    {"cuda", &tkb__op_gated_linear_unit_cuda, "cuda"},
};

const tkb__op_decl tkb__op_gated_linear_unit = {"gated_linear_unit", impls, TKB_ARRAY_LEN(impls),
                                                glu_specs};
