// tkb_main.cpp - a C++ program on tkbench.h, as tests/install/consumers.sh builds it
// against an installed tkbench (g++ -std=c++17 -Wall -Wextra -Wpedantic -Werror): one
// entry registered with TKB_REGISTER, main() from TKB_MAIN(). C++ has no designated
// initializers before C++20 nor C's compound literals, so the structs are filled field
// by field rather than with the header's C initializer macros.
#include <tkbench.h>

#include <algorithm>

namespace {

// out = 2 * x over a float32 vector
tkb_status twice_forward(const tkb_args *a, void *, tkb_array *const *outputs) {
  const tkb_array *x = tkb_args_array(a, "x");
  const float *in = static_cast<const float *>(x->data);
  float *out = static_cast<float *>(outputs[0]->data);
  std::transform(in, in + x->numel, out, [](float v) { return 2.0f * v; });
  return TKB_OK;
}

tkb_status twice_infer(const tkb_args *a, tkb_shapes *shapes) {
  const tkb_spec *x = tkb_args_spec(a, "x");
  if (x->dtype != TKB_FLOAT32) return tkb_set_error(TKB_ERR_UNSUPPORTED, "twice: x must be float32");
  shapes->n_outputs = 1;
  shapes->outputs[0] = *x;
  shapes->output_names[0] = "out";
  return TKB_OK;
}

tkb_param params[1];
tkb_fn twice;
tkb_value args[1];

tkb_status register_twice() {
  params[0].name = "x";
  params[0].kind = TKB_KIND_ARRAY;
  twice.name = "twice";
  twice.params = params;
  twice.n_params = 1;
  twice.infer = twice_infer;
  twice.forward = twice_forward;
  args[0].tag = TKB_VALUE_ABSTRACT;
  args[0].spec.dtype = TKB_FLOAT32;
  args[0].spec.rank = 1;
  args[0].spec.shape[0] = 4096;
  tkb_benchmark_def def{};
  def.op = "twice";
  def.name = "twice_4k";
  def.impl_name = "cxx";
  def.fn = &twice;
  def.args = args;
  def.n_args = 1;
  def.mode = TKB_MODE_FORWARD;
  def.tags = "cpu";
  def.device_kind = "cpu";
  return tkb_register_benchmark(&def); // entry "twice_4k_forward_cxx"
}

} // namespace

TKB_REGISTER(register_twice)
TKB_MAIN()
