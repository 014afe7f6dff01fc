/* kernel.c - device kernels through the device's backend: compiled at an op's prepare
 * time, launched in its hooks (the table: backend.h). The cpu has none. */
#include "internal.h"

tkb_status tkb__kernel_build(tkb_device *dev, const char *source, const char *options,
                             const char *name, tkb_kernel **out) {
  if (!dev || !source || !name || !out)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "tkb__kernel_build: %s is NULL",
                         !dev ? "dev" : !source ? "source" : !name ? "name" : "out");
  if (!dev->backend->kernel_build)
    return tkb_set_error(TKB_ERR_UNSUPPORTED,
                         "device %s compiles no kernels (its backend, %s, runs host code only)",
                         dev->name, dev->backend->kind);
  return dev->backend->kernel_build(dev, source, options ? options : "", name, out);
}

tkb_status tkb__kernel_launch(tkb_device *dev, tkb_kernel *k, int dims, const size_t *global,
                              const size_t *local, int nargs, const tkb_karg *args) {
  return dev->backend->kernel_launch(dev, k, dims, global, local, nargs, args);
}

void tkb__kernel_free(tkb_device *dev, tkb_kernel *k) {
  if (k && dev && dev->backend->kernel_free) dev->backend->kernel_free(dev, k);
}
