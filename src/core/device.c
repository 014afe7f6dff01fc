/* device.c - device lookup by name and the memory accounting every backend shares. */
#include "internal.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The kind ("cpu", "cuda", "opencl") and index a device name means. */
static tkb_status parse_name(const char *name, const char **kind, int *index) {
  *index = 0;
  if (!name || strcmp(name, "cpu") == 0 || strcmp(name, "cpu:0") == 0) {
    *kind = "cpu";
    return TKB_OK;
  }
  /* "kind:N" (N decimal, at most 6 digits); a bare "opencl" or "cuda" means index 0 */
  static const char *const kinds[] = {"cuda", "opencl"};
  for (size_t k = 0; *name && k < TKB_ARRAY_LEN(kinds); k++) {
    size_t len = strlen(kinds[k]);
    if (strncmp(name, kinds[k], len) != 0) continue;
    const char *rest = name + len;
    *kind = kinds[k];
    if (*rest == '\0') return TKB_OK;
    if (*rest != ':') break;
    size_t digits = strspn(rest + 1, "0123456789");
    if (digits == 0 || digits > 6 || rest[1 + digits] != '\0')
      return tkb_set_error(TKB_ERR_NOT_FOUND,
                           "device \"%s\" is not a device name; expected %s:N with N a device "
                           "index (0, 1, ...)", name, kinds[k]);
    *index = atoi(rest + 1);
    return TKB_OK;
  }
  return tkb_set_error(TKB_ERR_NOT_FOUND,
                       "device \"%s\" is not a device name; expected cpu, cuda:N or opencl:N%s",
                       name, *name ? "" : " (an empty name is none: leave the option out for the cpu)");
}

tkb_status tkb__device_name_check(const char *name) {
  const char *kind = "cpu";
  int index;
  return parse_name(name, &kind, &index);
}

tkb_status tkb_device_get(const char *name, tkb_device **out) {
  if (!out) return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "tkb_device_get: out is NULL");
  const char *kind = "cpu";
  int index;
  tkb_status st = parse_name(name, &kind, &index);
  if (st) return st;
  if (strcmp(kind, "cpu") == 0) {
    *out = tkb__cpu_device();
    return TKB_OK;
  }
  return tkb__backend_device(kind, index, name, out);
}

const char *tkb_device_name(const tkb_device *dev) { return dev ? dev->name : "(null)"; }
const char *tkb_device_description(const tkb_device *dev) { return dev ? dev->description : ""; }
const char *tkb_device_uuid(const tkb_device *dev) { return dev ? dev->uuid : ""; }

tkb_status tkb_device_count(const char *kind, int *n) {
  if (!kind || !n)
    return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "tkb_device_count: %s is NULL", kind ? "n" : "kind");
  *n = 0;
  if (strcmp(kind, "cpu") == 0) {
    *n = 1;
    return TKB_OK;
  }
  return tkb__backend_count(kind, n);
}

size_t tkb_device_bytes_in_use(const tkb_device *dev) {
  return atomic_load(&(dev ? (tkb_device *)dev : tkb__cpu_device())->bytes_in_use);
}
size_t tkb_device_peak_bytes(const tkb_device *dev) {
  return atomic_load(&(dev ? (tkb_device *)dev : tkb__cpu_device())->peak_bytes);
}
void tkb_device_reset_peak(tkb_device *dev) {
  if (!dev) dev = tkb__cpu_device();
  atomic_store(&dev->peak_bytes, atomic_load(&dev->bytes_in_use));
}

tkb_status tkb_device_alloc(tkb_device *dev, size_t nbytes, void **ptr) {
  if (!dev) dev = tkb__cpu_device();
  if (!ptr) return tkb_set_error(TKB_ERR_INVALID_ARGUMENT, "tkb_device_alloc: ptr is NULL");
  void *p = NULL;
  tkb_status st = dev->backend->alloc(dev, nbytes, &p);
  if (st) return st;
  /* Lock-free peak tracking: raise peak to the new in-use value if it is higher. */
  size_t now = atomic_fetch_add(&dev->bytes_in_use, nbytes) + nbytes;
  size_t peak = atomic_load(&dev->peak_bytes);
  while (now > peak && !atomic_compare_exchange_weak(&dev->peak_bytes, &peak, now)) {
  }
  *ptr = p;
  return TKB_OK;
}

void tkb_device_free(tkb_device *dev, void *ptr, size_t nbytes) {
  if (!ptr) return;
  if (!dev) dev = tkb__cpu_device();
  dev->backend->free(dev, ptr, nbytes);
  atomic_fetch_sub(&dev->bytes_in_use, nbytes);
}

tkb_status tkb_device_synchronize(tkb_device *dev) {
  if (!dev) dev = tkb__cpu_device();
  return dev->backend->synchronize(dev);
}

static int default_threads;

void tkb_set_num_threads(int n) {
  if (default_threads == 0) default_threads = omp_get_max_threads();
  omp_set_num_threads(n > 0 ? n : default_threads);
}

int tkb_get_num_threads(void) { return omp_get_max_threads(); }
