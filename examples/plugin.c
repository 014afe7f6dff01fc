/*
 * plugin.c - benchmark entries in a shared object, for the stock tkbench executable:
 *
 *   cc -shared -fPIC -I include examples/plugin.c -o relu_plugin.so
 *   (installed: cc -shared -fPIC $(pkg-config --cflags tkbench) plugin.c -o relu_plugin.so)
 *   tkbench list --load ./relu_plugin.so --filter relu
 *   tkbench run  --load ./relu_plugin.so --filter relu
 *
 * The object exports tkb_plugin_init(), which registers its entries. It does not link
 * libtkbench: the tkb_* calls resolve against the program that loads it, so the
 * entries land in that program's registry.
 */
#include <tkbench.h>

/* relu forward: y[i] = max(x[i], 0). */
static tkb_status relu_forward(const tkb_args *a, void *state, tkb_array *const *outputs) {
  (void)state;
  const tkb_array *x = tkb_args_array(a, "x");
  const float *xp = x->data;
  float *y = outputs[0]->data;
  for (int64_t i = 0; i < x->numel; i++) y[i] = xp[i] > 0 ? xp[i] : 0.0f;
  return TKB_OK;
}

/* forward with residuals: the same y, kept for the backward pass. */
static tkb_status relu_forward_res(const tkb_args *a, void *state, tkb_array *const *outputs,
                                   tkb_array *const *residuals) {
  (void)residuals;
  return relu_forward(a, state, outputs);
}

/* relu backward: dx[i] = dy[i] where x[i] > 0, else 0. */
static tkb_status relu_vjp(const tkb_args *a, void *state, const tkb_array *const *residuals,
                           const tkb_array *const *cotangents, tkb_array *const *grads) {
  (void)state;
  (void)residuals;
  const tkb_array *x = tkb_args_array(a, "x");
  const float *xp = x->data, *dy = cotangents[0]->data;
  float *dx = grads[0]->data;
  for (int64_t i = 0; i < x->numel; i++) dx[i] = xp[i] > 0 ? dy[i] : 0.0f;
  return TKB_OK;
}

static tkb_status relu_infer(const tkb_args *a, tkb_shapes *shapes) {
  const tkb_spec *x = tkb_args_spec(a, "x");
  if (x->dtype != TKB_FLOAT32) return tkb_set_error(TKB_ERR_UNSUPPORTED, "relu: x must be float32");
  shapes->n_outputs = 1;
  shapes->outputs[0] = *x;
  shapes->output_names[0] = "y";
  return TKB_OK;
}

static const tkb_param relu_params[] = {{.name = "x", .kind = TKB_KIND_ARRAY}};

static const tkb_fn relu = {
    .name = "relu",
    .params = relu_params,
    .n_params = 1,
    .infer = relu_infer,
    .forward = relu_forward,
    .forward_res = relu_forward_res,
    .vjp = relu_vjp,
};

/* Per element: forward reads x, writes y (8 bytes, 1 op); the backward pass adds
 * reading x and dy and writing dx (12 bytes, 1 op). */
static tkb_status relu_counts(const tkb_args *a, tkb_mode mode, tkb_counts *out) {
  int64_t n;
  tkb_status st = tkb_spec_numel(tkb_args_spec(a, "x"), &n);
  double e = (double)n, both = mode == TKB_MODE_FORWARD_AND_VJP ? 2.0 : 1.0;
  *out = (tkb_counts){.items = e, .bytes = (mode == TKB_MODE_FORWARD ? 8.0 : 20.0) * e,
                      .flops = both * e};
  return st;
}

static const tkb_spec shapes[] = {TKB_SPEC_INIT(TKB_FLOAT32, 256, 256),
                                  TKB_SPEC_INIT(TKB_FLOAT32, 1024, 256)};
static const char *const names[] = {"relu_256x256", "relu_1024x256"};
static tkb_value args[2][1];

/* The plugin's one export. */
tkb_status tkb_plugin_init(void) {
  static const tkb_mode modes[] = {TKB_MODE_FORWARD, TKB_MODE_FORWARD_AND_VJP};
  for (int s = 0; s < 2; s++) {
    args[s][0] = TKB_ABSTRACT(shapes[s]);
    for (int m = 0; m < 2; m++) {
      tkb_benchmark_def def = {.op = "relu", .name = names[s], .impl_name = "c", .fn = &relu,
                               .args = args[s], .n_args = 1, .mode = modes[m],
                               .counts = relu_counts, .tags = "cpu,plugin", .device_kind = "cpu"};
      tkb_status st = tkb_register_benchmark(&def);
      if (st) return st;
    }
  }
  return TKB_OK;
}
