/* cpu.c - the built-in CPU backend: aligned host memory, no queue, host clocks, no kernels
 * to compile (the table: src/core/backend.h). */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <unistd.h>

/* 64 bytes: a cache line and an AVX-512 vector, so kernels may use aligned loads. */
#define CPU_ALIGNMENT 64

static tkb_status cpu_alloc(tkb_device *dev, size_t nbytes, void **ptr) {
  (void)dev;
  /* a request past what the process may hold fails here, with the reason, rather than
   * succeed on paper (overcommit) and get the process killed when touched */
  tkb__mem_limit limit;
  tkb__memory_limit(&limit);
  if (nbytes > limit.bytes)
    return tkb_set_error(TKB_ERR_OUT_OF_MEMORY,
                         "cannot allocate %zu bytes (%.2f GiB) on cpu: %s is %.2f GiB", nbytes,
                         nbytes / 1073741824.0, limit.source, limit.bytes / 1073741824.0);
  size_t rounded = (nbytes + CPU_ALIGNMENT - 1) / CPU_ALIGNMENT * CPU_ALIGNMENT;
  void *p = aligned_alloc(CPU_ALIGNMENT, rounded ? rounded : CPU_ALIGNMENT);
  if (!p)
    return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "cannot allocate %zu bytes (%.2f GiB) on cpu",
                         nbytes, nbytes / 1073741824.0);
  *ptr = p;
  return TKB_OK;
}

static void cpu_free(tkb_device *dev, void *ptr, size_t nbytes) {
  (void)dev;
  (void)nbytes;
  free(ptr);
}

static tkb_status cpu_memset_zero(tkb_device *dev, void *ptr, size_t nbytes) {
  (void)dev;
  memset(ptr, 0, nbytes);
  return TKB_OK;
}

static tkb_status cpu_copy(tkb_device *dev, void *dst, const void *src, size_t nbytes) {
  (void)dev;
  memcpy(dst, src, nbytes);
  return TKB_OK;
}

static tkb_status cpu_synchronize(tkb_device *dev) {
  (void)dev;
  return TKB_OK;
}

/* Cold caches: write a buffer twice the last-level cache (sysconf's L3, else L2, else
 * 32 MiB), so the timed call finds none of its data cached. Allocated on the first call,
 * which the benchmark makes before its timed loop; kept for the process. */
static unsigned char *flush_buf;
static size_t flush_bytes;

static pthread_mutex_t flush_lock = PTHREAD_MUTEX_INITIALIZER;

static tkb_status cpu_flush_cache(tkb_device *dev) {
  (void)dev;
  pthread_mutex_lock(&flush_lock); /* not in a timed interval: the flush precedes it */
  if (!flush_buf) {
    long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (llc <= 0) llc = sysconf(_SC_LEVEL2_CACHE_SIZE);
    size_t bytes = 2 * (llc > 0 ? (size_t)llc : (size_t)32 << 20);
    flush_buf = aligned_alloc(CPU_ALIGNMENT, (bytes + CPU_ALIGNMENT - 1) / CPU_ALIGNMENT * CPU_ALIGNMENT);
    if (!flush_buf) {
      pthread_mutex_unlock(&flush_lock);
      return tkb_set_error(TKB_ERR_OUT_OF_MEMORY, "cannot allocate the %zu-byte cache-flush buffer on cpu",
                           bytes);
    }
    flush_bytes = bytes;
  }
  pthread_mutex_unlock(&flush_lock);
  /* a value that changes each time, so no write is skipped as redundant */
  static unsigned char stamp;
  memset(flush_buf, ++stamp, flush_bytes);
  __asm__ __volatile__("" : : "r"(flush_buf) : "memory");
  return TKB_OK;
}


const tkb_backend tkb__cpu_backend = {
    .kind = "cpu",
    .host_addressable = true,
    .alloc = cpu_alloc,
    .free = cpu_free,
    .memset_zero = cpu_memset_zero,
    .copy = cpu_copy,
    .upload = cpu_copy,   /* host and device memory are the same */
    .download = cpu_copy,
    .synchronize = cpu_synchronize,
    .fill = tkb__fill_cpu,
    .flush_cache = cpu_flush_cache,
};

static tkb_device cpu_device;
static pthread_once_t cpu_once = PTHREAD_ONCE_INIT;

static void cpu_init(void) {
  cpu_device.backend = &tkb__cpu_backend;
  snprintf(cpu_device.name, sizeof cpu_device.name, "cpu");
  snprintf(cpu_device.description, sizeof cpu_device.description, "%s, %d cores",
           tkb__cpu_model(), tkb__num_cpus());
  atomic_init(&cpu_device.bytes_in_use, 0);
  atomic_init(&cpu_device.peak_bytes, 0);
}

tkb_device *tkb__cpu_device(void) {
  pthread_once(&cpu_once, cpu_init);
  return &cpu_device;
}
