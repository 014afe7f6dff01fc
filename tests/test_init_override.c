/* test_init_override.c - `--init ARG=DIST` at the library's level: the parser's grammar
 * and refusals, the distribution reaching the standardized arrays (a named argument,
 * "*" for the floating-point ones an op leaves to the default rule, the subnormal range
 * per dtype), and what does not apply refused with the entry and the argument. */
#include "check.h"
#include "runner.h"

#include <float.h>

static size_t entry(const char *name) {
  size_t i = (size_t)-1;
  CHECK_OK(tkb_registry_find(name, &i));
  return i;
}

static void test_parse(void) {
  tkb__init_override o;
  CHECK_OK(tkb__init_override_parse("x=normal(1, 0.5)", &o));
  CHECK(!strcmp(o.arg, "x") && o.init.kind == TKB_INIT_NORMAL && o.init.a == 1 && o.init.b == 0.5);
  CHECK_OK(tkb__init_override_parse("*=uniform(-2,3)", &o));
  CHECK(!strcmp(o.arg, "*") && o.init.kind == TKB_INIT_UNIFORM && o.init.a == -2 && o.init.b == 3);
  CHECK_OK(tkb__init_override_parse("w=ones", &o));
  CHECK(o.init.kind == TKB_INIT_CONSTANT && o.init.a == 1);
  CHECK_OK(tkb__init_override_parse("w=subnormal", &o));
  CHECK(o.subnormal);
  const char *bad[] = {"x", "=zeros", "x=normal(0)", "x=normal(0,-1)", "x=uniform(1,1)", "x=gauss",
                       "x=constant(nan)", "x=zeros(1)"};
  for (size_t k = 0; k < sizeof bad / sizeof *bad; k++)
    CHECK_MSG(tkb__init_override_parse(bad[k], &o) == TKB_ERR_INVALID_ARGUMENT &&
                  strstr(tkb_last_error(), "--init"), "%s: %s", bad[k], tkb_last_error());
}

/* Every element of std arg k read as a double. */
static bool all_equal(const tkb_arrays *args, size_t k, double v) {
  const tkb_array *a = tkb_arrays_get(args, k);
  for (int64_t i = 0; a && i < a->numel; i++)
    if (tkb_array_get_f64(a, i) != v) return false;
  return a != NULL;
}

static void test_applied(void) {
  const size_t norm = entry("cpu_96x96x64_forward_cpu");
  tkb__init_override ov[2];
  CHECK_OK(tkb__init_override_parse("*=constant(3)", &ov[0]));
  CHECK_OK(tkb__init_override_parse("x=zeros", &ov[1]));
  tkb_std_fn *f;
  tkb_arrays *args;
  CHECK_OK(tkb__registry_standardize_init(norm, "cpu", 0, ov, 2, &f, &args));
  /* x, scale, offset: the named one wins over * */
  CHECK(all_equal(args, 0, 0) && all_equal(args, 1, 3) && all_equal(args, 2, 3));
  tkb_std_fn_free(f);
  tkb_arrays_free(args);
  CHECK_OK(tkb__init_override_parse("x=subnormal", &ov[0]));
  CHECK_OK(tkb__registry_standardize_init(norm, "cpu", 0, ov, 1, &f, &args));
  const tkb_array *x = tkb_arrays_get(args, 0);
  bool subnormal = true, nonzero = false;
  for (int64_t i = 0; i < x->numel; i++) {
    const double v = tkb_array_get_f64(x, i);
    subnormal &= fabs(v) < FLT_MIN; /* bfloat16 has float32's exponent */
    nonzero |= v != 0;
  }
  CHECK(subnormal && nonzero);
  tkb_std_fn_free(f);
  tkb_arrays_free(args);
  /* none given: exactly the registry's own standardization */
  CHECK_OK(tkb__registry_standardize_init(norm, "cpu", 0, NULL, 0, &f, &args));
  tkb_std_fn_free(f);
  tkb_arrays_free(args);
}

static void test_refused(void) {
  size_t idx[1] = {entry("cpu_96x96x64_forward_cpu")};
  tkb__init_override o;
  CHECK_OK(tkb__init_override_parse("nope=zeros", &o));
  CHECK(tkb__init_overrides_check(idx, 1, &o, 1) == TKB_ERR_INVALID_ARGUMENT &&
        strstr(tkb_last_error(), "no selected entry has an argument named nope"));
  CHECK_OK(tkb__init_override_parse("axis=zeros", &o));
  CHECK(tkb__init_overrides_check(idx, 1, &o, 1) == TKB_ERR_INVALID_ARGUMENT &&
        strstr(tkb_last_error(), "axis is a static value"));
  /* ragged_dot's group sizes are int32: no normal; "*" leaves them (and their own
   * initializer) alone */
  size_t rd = (size_t)-1;
  for (size_t i = 0; i < tkb_registry_count() && rd == (size_t)-1; i++)
    if (!strcmp(tkb_registry_get(i)->op, "ragged_dot") && tkb_registry_has_tag(i, "cpu")) rd = i;
  CHECK(rd != (size_t)-1);
  CHECK_OK(tkb__init_override_parse("group_sizes=normal(0,1)", &o));
  CHECK(tkb__init_overrides_check(&rd, 1, &o, 1) == TKB_ERR_INVALID_ARGUMENT &&
        strstr(tkb_last_error(), "group_sizes is int32, which takes no normal"));
  CHECK_OK(tkb__init_override_parse("*=normal(0,1)", &o));
  CHECK_OK(tkb__init_overrides_check(&rd, 1, &o, 1));
}

int main(void) {
  CHECK_OK(tkb_register_builtin_ops());
  test_parse();
  test_applied();
  test_refused();
  tkb_registry_clear();
  return CHECK_DONE();
}
