/* test_plain_function.c - tkb_register_function / TKB_FUNCTION: a plain `void f(void *ctx)`
 * becomes an entry that is called exactly as written, with its counts, and bad
 * registrations are refused with a message naming the value. */
#include "check.h"
#include "tkbench.h"

static int calls;
static void count_calls(void *ctx) { (*(int *)ctx)++; }

static void test_runs_as_written(void) {
  CHECK_OK(tkb_register_function("counted", count_calls, &calls, 64, 8));
  size_t i;
  CHECK_OK(tkb_registry_find("counted_forward_c", &i));
  const tkb_benchmark_def *d = tkb_registry_get(i);
  CHECK(d && !strcmp(d->op, "counted") && !strcmp(d->impl_name, "c") && d->mode == TKB_MODE_FORWARD &&
        tkb_registry_has_tag(i, "cpu"));
  tkb_counts c;
  CHECK_OK(tkb_registry_counts(i, &c));
  CHECK(c.items == 1 && c.bytes == 64 && c.flops == 8);
  tkb_std_fn *f;
  tkb_arrays *args;
  CHECK_OK(tkb_registry_standardize(i, "cpu", 0, &f, &args));
  calls = 0;
  tkb_bench_opts o = {.iterations = 7, .experiments = 2};
  tkb_benchmark_data *bd = NULL;
  CHECK_OK(tkb_benchmark(f, args, &o, &bd));
  /* every timed call is one call of the function, nothing else calls it */
  CHECK_MSG(bd && bd->n_evaluation_times == 14 && calls >= 14, "%d times, %d calls",
            bd ? bd->n_evaluation_times : -1, calls);
  tkb_benchmark_data_free(bd);
  tkb_std_fn_free(f);
  tkb_arrays_free(args);
}

static void test_refused(void) {
  CHECK(tkb_register_function("nofn", NULL, NULL, 0, 0) == TKB_ERR_INVALID_ARGUMENT &&
        strstr(tkb_last_error(), "fn is NULL"));
  CHECK(tkb_register_function("neg", count_calls, &calls, -1, 0) == TKB_ERR_INVALID_ARGUMENT &&
        strstr(tkb_last_error(), "bytes_per_call -1"));
  CHECK(tkb_register_function("bad name", count_calls, &calls, 0, 0) == TKB_ERR_INVALID_ARGUMENT);
  CHECK(tkb_register_function("counted", count_calls, &calls, 0, 0) == TKB_ERR_DUPLICATE_ARGUMENT);
}

int main(void) {
  test_runs_as_written();
  test_refused();
  tkb_registry_clear();
  return CHECK_DONE();
}
