/* test_spec.c - specs (checks, sizes, text), arrays (alignment, ownership) and the
 * device allocator's current/peak accounting. */
#include "check.h"
#include "tkbench.h"

#include <stdint.h>

static void test_specs(void) {
  tkb_spec s = TKB_SPEC(TKB_BFLOAT16, 384, 384, 64);
  int64_t n;
  size_t b;
  CHECK_OK(tkb_spec_numel(&s, &n));
  CHECK_OK(tkb_spec_nbytes(&s, &b));
  CHECK(s.rank == 3 && n == 384 * 384 * 64 && b == (size_t)n * 2);
  tkb_spec scalar = TKB_SCALAR_SPEC(TKB_FLOAT64);
  CHECK_OK(tkb_spec_numel(&scalar, &n));
  CHECK(n == 1);
  tkb_spec empty = TKB_SPEC(TKB_FLOAT32, 0, INT64_MAX);
  CHECK_OK(tkb_spec_numel(&empty, &n));
  CHECK(n == 0);
  char buf[128];
  tkb_spec_format(&s, buf, sizeof buf);
  CHECK(strcmp(buf, "bfloat16[384,384,64]") == 0);
  tkb_spec_format(&scalar, buf, sizeof buf);
  CHECK(strcmp(buf, "float64[]") == 0);
  tkb_spec p;
  CHECK_OK(tkb_spec_parse("bfloat16[384,384,64]", &p));
  CHECK(tkb_spec_equal(&p, &s));
  CHECK_OK(tkb_spec_parse("f32[]", &p));
  CHECK(p.rank == 0 && p.dtype == TKB_FLOAT32);
  CHECK_ERR(tkb_spec_parse("float32[3,x]", &p), TKB_ERR_INVALID_ARGUMENT, "float32[3,x]");
  CHECK_ERR(tkb_spec_parse("float32", &p), TKB_ERR_INVALID_ARGUMENT, "dtype[d0,d1,...]");
  CHECK_ERR(tkb_spec_parse("float32[1,2,3,4,5,6,7,8,9]", &p), TKB_ERR_BAD_SHAPE, "rank");
  CHECK_ERR(tkb_spec_parse("float32[4,-2]", &p), TKB_ERR_BAD_SHAPE, "-2");

  tkb_spec neg = TKB_SPEC(TKB_FLOAT32, 3, -4);
  CHECK_ERR(tkb_spec_check(&neg, "x"), TKB_ERR_BAD_SHAPE, "negative dimension -4 at axis 1");
  tkb_spec r9 = {.dtype = TKB_INT8, .rank = 9};
  CHECK_ERR(tkb_spec_check(&r9, "x"), TKB_ERR_BAD_SHAPE, "rank 9; allowed ranks are 0..8");
  tkb_spec over = TKB_SPEC(TKB_FLOAT32, INT64_MAX / 2, 3);
  CHECK_ERR(tkb_spec_check(&over, "x"), TKB_ERR_OVERFLOW, "int64");
  tkb_spec bytes_over = TKB_SPEC(TKB_FLOAT64, INT64_MAX / 4);
  CHECK_ERR(tkb_spec_check(&bytes_over, "x"), TKB_ERR_OVERFLOW, "overflow");
  tkb_spec bad_dtype = {.dtype = (tkb_dtype)99, .rank = 1, .shape = {2}};
  CHECK_ERR(tkb_spec_check(&bad_dtype, "x"), TKB_ERR_INVALID_ARGUMENT, "dtype 99");
}

static void test_arrays_and_allocator(void) {
  size_t base = tkb_device_bytes_in_use(NULL);
  tkb_device *cpu;
  CHECK_OK(tkb_device_get("cpu", &cpu));
  CHECK(strcmp(tkb_device_name(cpu), "cpu") == 0);
  CHECK(strlen(tkb_device_description(cpu)) > 0);
  tkb_device_reset_peak(cpu);
  tkb_spec s = TKB_SPEC(TKB_FLOAT32, 1000, 3);
  tkb_array *a, *b;
  CHECK_OK(tkb_array_new(cpu, &s, &a));
  CHECK(((uintptr_t)a->data % 64) == 0);
  CHECK(a->numel == 3000 && a->nbytes == 12000 && a->owns_data);
  CHECK(tkb_device_bytes_in_use(cpu) == base + 12000);
  CHECK_OK(tkb_array_zeros(cpu, &s, &b));
  CHECK(tkb_device_bytes_in_use(cpu) == base + 24000);
  bool zero = true;
  for (int i = 0; i < 3000; i++) zero &= ((float *)b->data)[i] == 0.0f;
  CHECK(zero);
  tkb_array_free(a);
  CHECK(tkb_device_bytes_in_use(cpu) == base + 12000);
  CHECK(tkb_device_peak_bytes(cpu) == base + 24000);
  tkb_device_reset_peak(cpu);
  CHECK(tkb_device_peak_bytes(cpu) == base + 12000);
  tkb_array *c;
  CHECK_OK(tkb_array_copy(b, NULL, &c));
  CHECK(tkb_array_equal(b, c) && c->data != b->data);
  tkb_array_set_f64(c, 5, 2.5);
  CHECK(tkb_array_get_f64(c, 5) == 2.5 && !tkb_array_equal(b, c));
  tkb_array_free(b);
  tkb_array_free(c);
  tkb_array_free(NULL);
  CHECK(tkb_device_bytes_in_use(cpu) == base);

  /* wrapped memory is neither counted nor freed */
  float host[4] = {1, 2, 3, 4};
  tkb_spec hs = TKB_SPEC(TKB_FLOAT32, 4);
  tkb_array *w;
  CHECK_OK(tkb_array_wrap(&hs, host, &w));
  CHECK(!w->owns_data && tkb_device_bytes_in_use(cpu) == base);
  tkb_array_free(w);
  CHECK(host[3] == 4);

  /* too big for memory: an error, nothing allocated */
  tkb_spec huge = TKB_SPEC(TKB_FLOAT64, 1LL << 40);
  CHECK_ERR(tkb_array_new(cpu, &huge, &a), TKB_ERR_OUT_OF_MEMORY, "bytes");
  CHECK(tkb_device_bytes_in_use(cpu) == base);

  /* lists */
  tkb_arrays *l;
  CHECK_OK(tkb_arrays_new(&l));
  CHECK_OK(tkb_array_new(NULL, &hs, &a));
  CHECK_OK(tkb_arrays_push(l, a, "first"));
  CHECK(tkb_arrays_count(l) == 1 && tkb_arrays_get(l, 0) == a && tkb_arrays_get(l, 1) == NULL);
  CHECK(strcmp(tkb_arrays_name(l, 0), "first") == 0 && strcmp(tkb_arrays_name(l, 3), "") == 0);
  tkb_arrays_free(l);
  tkb_arrays_free(NULL);
  CHECK(tkb_device_bytes_in_use(cpu) == base);

  /* device names */
  tkb_device *d;
  CHECK_ERR(tkb_device_get("gpu", &d), TKB_ERR_NOT_FOUND, "\"gpu\"");
  CHECK_ERR(tkb_device_get("cuda:0", &d), TKB_ERR_DEVICE, "cuda:0");
  const char *const *m = tkb_device_methods(cpu);
  CHECK(strcmp(m[0], "wallclock") == 0 && strcmp(m[1], "cpu_time") == 0 && strcmp(m[2], "instructions") == 0 &&
        m[3] == NULL);
}

static void test_misc(void) {
  CHECK(strcmp(tkb_version(), TKB_VERSION_STRING) == 0);
  CHECK(strlen(tkb_build_type()) > 0);
  CHECK(strcmp(tkb_status_name(TKB_ERR_BAD_SHAPE), "BAD_SHAPE") == 0);
  CHECK(strcmp(tkb_status_name((tkb_status)1234), "UNKNOWN_STATUS") == 0);
  tkb_mode m;
  CHECK_OK(tkb_mode_parse("forward_and_vjp", &m));
  CHECK(m == TKB_MODE_FORWARD_AND_VJP);
  CHECK_ERR(tkb_mode_parse("backward", &m), TKB_ERR_NOT_FOUND, "\"backward\"");
  CHECK(tkb_set_error(TKB_ERR_IO, "x=%d", 3) == TKB_ERR_IO && strcmp(tkb_last_error(), "x=3") == 0);
}

int main(void) {
  test_specs();
  test_arrays_and_allocator();
  test_misc();
  return CHECK_DONE();
}
