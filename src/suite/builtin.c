/* builtin.c - registers the ops shipped with tkbench. Each op's specs.c defines its
 * tkb__register_<op>() (declared in src/suite/builtin.h). */
#include "builtin.h"

#include <pthread.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static tkb_status once_status;

static void register_all(void) {
  tkb_status (*const registrars[])(void) = {
      tkb__register_normalization,
      tkb__register_gated_linear_unit,
      tkb__register_ragged_dot,
      tkb__register_linear_softmax_cross_entropy_loss,
      tkb__register_dot_product_attention,
      tkb__register_opencl_ops, /* after the ops it twins (src/suite/opencl_ops.c) */
      tkb__register_cuda_ops,   /* likewise (src/suite/cuda_ops.c) */
  };
  for (size_t i = 0; i < sizeof registrars / sizeof registrars[0] && !once_status; i++)
    once_status = registrars[i]();
}

tkb_status tkb_register_builtin_ops(void) {
  pthread_once(&once, register_all);
  return once_status;
}
