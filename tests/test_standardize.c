/* test_standardize.c - binding, the four modes, no_init, idempotence, errors. */
#include "check.h"
#include "toy_fn.h"

static const tkb_spec S = TKB_SPEC_INIT(TKB_FLOAT32, 4, 8);

/* Standardizes toy_fn and returns the (single) output of one call, copied. */
static tkb_array *call_once(const tkb_value *args, size_t n, const tkb_kwarg *kw, size_t nkw,
                            tkb_mode mode, uint64_t seed, tkb_arrays **std_args_out) {
  tkb_std_opts o = {.mode = mode, .seed = seed};
  tkb_std_fn *f = NULL;
  tkb_arrays *sa = NULL, *outs = NULL;
  tkb_array *copy = NULL;
  CHECK_OK(tkb_standardize_function(&toy_fn, args, n, kw, nkw, &o, &f, &sa));
  if (!f) return NULL;
  CHECK_OK(tkb_std_fn_call(f, sa, &outs));
  if (outs) CHECK_OK(tkb_array_copy(tkb_arrays_get(outs, 0), NULL, &copy));
  tkb_std_fn_free(f);
  if (std_args_out) *std_args_out = sa;
  else tkb_arrays_free(sa);
  return copy;
}

static void test_positional_equals_keyword(void) {
  tkb_value pos[] = {TKB_ABSTRACT(S), TKB_ABSTRACT(S)};
  tkb_kwarg kw_alpha[] = {{"alpha", TKB_FLOAT(3.0)}};
  tkb_array *a = call_once(pos, 2, kw_alpha, 1, TKB_MODE_FORWARD, 7, NULL);
  tkb_kwarg kws[] = {{"y", TKB_ABSTRACT(S)}, {"alpha", TKB_INT(3)}, {"x", TKB_ABSTRACT(S)}};
  tkb_array *b = call_once(NULL, 0, kws, 3, TKB_MODE_FORWARD, 7, NULL);
  tkb_value mixed[] = {TKB_ABSTRACT(S)};
  tkb_kwarg kwm[] = {{"alpha", TKB_FLOAT(3.0)}, {"y", TKB_ABSTRACT(S)}};
  tkb_array *c = call_once(mixed, 1, kwm, 2, TKB_MODE_FORWARD, 7, NULL);
  CHECK(a && b && c);
  if (a && b && c) {
    CHECK(tkb_array_equal(a, b));
    CHECK(tkb_array_equal(a, c));
  }
  /* a different seed gives different data */
  tkb_array *d = call_once(pos, 2, kw_alpha, 1, TKB_MODE_FORWARD, 8, NULL);
  CHECK(d && a && !tkb_array_equal(a, d));
  tkb_array_free(a);
  tkb_array_free(b);
  tkb_array_free(c);
  tkb_array_free(d);
}

static void test_binding_errors(void) {
  tkb_std_fn *f = NULL;
  tkb_arrays *sa = NULL;
  tkb_value x = TKB_ABSTRACT(S);
  CHECK_ERR(tkb_standardize_function(&toy_fn, NULL, 0, NULL, 0, NULL, &f, &sa),
            TKB_ERR_MISSING_ARGUMENT, "'x'");
  tkb_kwarg unknown[] = {{"bogus", TKB_INT(1)}};
  CHECK_ERR(tkb_standardize_function(&toy_fn, &x, 1, unknown, 1, NULL, &f, &sa),
            TKB_ERR_UNKNOWN_KEYWORD, "'bogus'");
  tkb_kwarg dup[] = {{"x", TKB_ABSTRACT(S)}};
  CHECK_ERR(tkb_standardize_function(&toy_fn, &x, 1, dup, 1, NULL, &f, &sa),
            TKB_ERR_DUPLICATE_ARGUMENT, "'x'");
  tkb_kwarg dup2[] = {{"alpha", TKB_FLOAT(1)}, {"alpha", TKB_FLOAT(2)}};
  CHECK_ERR(tkb_standardize_function(&toy_fn, &x, 1, dup2, 2, NULL, &f, &sa),
            TKB_ERR_DUPLICATE_ARGUMENT, "'alpha'");
  tkb_kwarg wrong[] = {{"alpha", TKB_STRING("big")}};
  CHECK_ERR(tkb_standardize_function(&toy_fn, &x, 1, wrong, 1, NULL, &f, &sa),
            TKB_ERR_WRONG_KIND, "'alpha'");
  tkb_value str_as_array = TKB_STRING("not an array");
  CHECK_ERR(tkb_standardize_function(&toy_fn, &str_as_array, 1, NULL, 0, NULL, &f, &sa),
            TKB_ERR_WRONG_KIND, "'x'");
  tkb_value none_x = TKB_NONE;
  CHECK_ERR(tkb_standardize_function(&toy_fn, &none_x, 1, NULL, 0, NULL, &f, &sa),
            TKB_ERR_WRONG_KIND, "'x'");
  /* a tag that is none of tkb_value's (garbage memory): named with its value */
  tkb_value garbage = {.tag = (tkb_value_tag)99};
  CHECK_ERR(tkb_standardize_function(&toy_fn, &garbage, 1, NULL, 0, NULL, &f, &sa),
            TKB_ERR_WRONG_KIND, "'x'");
  CHECK(strstr(tkb_last_error(), "has tag 99, which is no tkb_value tag") != NULL);
  /* alpha is keyword-only: a third positional is one too many */
  tkb_value three[] = {TKB_ABSTRACT(S), TKB_ABSTRACT(S), TKB_FLOAT(2)};
  CHECK_ERR(tkb_standardize_function(&toy_fn, three, 3, NULL, 0, NULL, &f, &sa),
            TKB_ERR_TOO_MANY_POSITIONAL, "takes 2 positional arguments but 3 were given");
  tkb_value neg = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 4, -1));
  CHECK_ERR(tkb_standardize_function(&toy_fn, &neg, 1, NULL, 0, NULL, &f, &sa),
            TKB_ERR_BAD_SHAPE, "'x'");
  CHECK(strstr(tkb_last_error(), "-1") != NULL);
  tkb_spec big_rank = {.dtype = TKB_FLOAT32, .rank = 9};
  tkb_value r9 = TKB_ABSTRACT(big_rank);
  CHECK_ERR(tkb_standardize_function(&toy_fn, &r9, 1, NULL, 0, NULL, &f, &sa),
            TKB_ERR_BAD_SHAPE, "rank 9");
  tkb_value huge = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, INT64_MAX / 2, 4));
  CHECK_ERR(tkb_standardize_function(&toy_fn, &huge, 1, NULL, 0, NULL, &f, &sa),
            TKB_ERR_OVERFLOW, "'x'");
  /* Fits in size_t, not in memory: a clear error before anything is allocated. */
  tkb_value toobig = TKB_ABSTRACT(TKB_SPEC(TKB_FLOAT32, 1 << 20, 1 << 20));
  CHECK_ERR(tkb_standardize_function(&toy_fn, &toobig, 1, NULL, 0, NULL, &f, &sa),
            TKB_ERR_OUT_OF_MEMORY, "GiB");
  /* the infer hook's own errors come through */
  tkb_value i32 = TKB_ABSTRACT(TKB_SPEC(TKB_INT32, 4));
  CHECK_ERR(tkb_standardize_function(&toy_fn, &i32, 1, NULL, 0, NULL, &f, &sa),
            TKB_ERR_UNSUPPORTED, "float32");
  /* a vjp mode on a function without vjp */
  tkb_std_opts vjp = {.mode = TKB_MODE_VJP};
  CHECK_ERR(tkb_standardize_function(&toy_fn_forward_only, &x, 1, NULL, 0, &vjp, &f, &sa),
            TKB_ERR_UNSUPPORTED, "axpy_fwd");
  CHECK(strstr(tkb_last_error(), "'vjp'") != NULL);
  tkb_std_opts fav = {.mode = TKB_MODE_FORWARD_AND_VJP};
  CHECK_ERR(tkb_standardize_function(&toy_fn_forward_only, &x, 1, NULL, 0, &fav, &f, &sa),
            TKB_ERR_UNSUPPORTED, "forward_and_vjp");
  tkb_std_opts bad_dev = {.device = "tpu:0"};
  CHECK_ERR(tkb_standardize_function(&toy_fn, &x, 1, NULL, 0, &bad_dev, &f, &sa),
            TKB_ERR_NOT_FOUND, "tpu:0");
  CHECK(f == NULL && sa == NULL); /* outputs untouched on failure */
}

static bool all_close(const tkb_array *a, const tkb_array *b, double tol) {
  if (!tkb_spec_equal(&a->spec, &b->spec)) return false;
  for (int64_t i = 0; i < a->numel; i++)
    if (fabs(tkb_array_get_f64(a, i) - tkb_array_get_f64(b, i)) > tol) return false;
  return true;
}

static void test_modes(void) {
  tkb_value args[] = {TKB_ABSTRACT(S), TKB_ABSTRACT(S)};
  tkb_kwarg kw[] = {{"alpha", TKB_FLOAT(0.5)}};
  tkb_std_fn *f[4] = {0};
  tkb_arrays *sa[4] = {0}, *outs[4] = {0};
  for (int m = 0; m < 4; m++) {
    tkb_std_opts o = {.mode = (tkb_mode)m, .seed = 11};
    CHECK_OK(tkb_standardize_function(&toy_fn, args, 2, kw, 1, &o, &f[m], &sa[m]));
    CHECK(tkb_std_fn_mode(f[m]) == (tkb_mode)m);
    CHECK_OK(tkb_std_fn_call(f[m], sa[m], &outs[m]));
  }
  /* forward: args x, y; out */
  CHECK(tkb_arrays_count(sa[0]) == 2 && tkb_arrays_count(outs[0]) == 1);
  CHECK(strcmp(tkb_arrays_name(sa[0], 1), "y") == 0);
  /* forward_res: outputs equal forward's, then the residual */
  CHECK(tkb_arrays_count(outs[1]) == 2);
  CHECK(tkb_array_equal(tkb_arrays_get(outs[0], 0), tkb_arrays_get(outs[1], 0)));
  CHECK(strcmp(tkb_arrays_name(outs[1], 1), "ax") == 0);
  /* vjp: the args are the cotangents = the forward outputs (Tokamax) */
  CHECK(tkb_arrays_count(sa[2]) == 1);
  CHECK(strcmp(tkb_arrays_name(sa[2], 0), "dout") == 0);
  CHECK(tkb_array_equal(tkb_arrays_get(sa[2], 0), tkb_arrays_get(outs[0], 0)));
  CHECK(tkb_arrays_count(outs[2]) == 2);
  CHECK(strcmp(tkb_arrays_name(outs[2], 0), "dx") == 0 && strcmp(tkb_arrays_name(outs[2], 1), "dy") == 0);
  /* forward_and_vjp: outputs then grads; grads equal the vjp mode's */
  CHECK(tkb_arrays_count(outs[3]) == 3);
  CHECK(tkb_array_equal(tkb_arrays_get(outs[3], 0), tkb_arrays_get(outs[0], 0)));
  CHECK(tkb_array_equal(tkb_arrays_get(outs[3], 1), tkb_arrays_get(outs[2], 0)));
  CHECK(tkb_array_equal(tkb_arrays_get(outs[3], 2), tkb_arrays_get(outs[2], 1)));
  /* and the numbers are right: out = 0.5 x + y; dx = 0.5 out; dy = out */
  const tkb_array *x = tkb_arrays_get(sa[0], 0), *y = tkb_arrays_get(sa[0], 1);
  const tkb_array *out = tkb_arrays_get(outs[0], 0), *dx = tkb_arrays_get(outs[2], 0);
  bool ok = true;
  for (int64_t i = 0; i < x->numel; i++) {
    float xi = ((float *)x->data)[i], yi = ((float *)y->data)[i], o = ((float *)out->data)[i];
    ok &= o == 0.5f * xi + yi;
    ok &= ((float *)dx->data)[i] == 0.5f * o;
  }
  CHECK(ok);
  /* Calling again with other args gives other results into the same outputs. */
  tkb_arrays *outs2;
  tkb_array *before;
  CHECK_OK(tkb_array_copy(tkb_arrays_get(outs[0], 0), NULL, &before));
  float *xd = tkb_arrays_get(sa[0], 0)->data;
  xd[0] += 2.0f;
  CHECK_OK(tkb_std_fn_call(f[0], sa[0], &outs2));
  CHECK(outs2 == outs[0]);
  CHECK_NEAR(((float *)tkb_arrays_get(outs2, 0)->data)[0], ((float *)before->data)[0] + 1.0f, 1e-5);
  tkb_array_free(before);
  /* random cotangents */
  tkb_std_opts ro = {.mode = TKB_MODE_VJP, .seed = 11, .random_cotangents = true};
  tkb_std_fn *fr;
  tkb_arrays *sr, *or;
  CHECK_OK(tkb_standardize_function(&toy_fn, args, 2, kw, 1, &ro, &fr, &sr));
  CHECK(!tkb_array_equal(tkb_arrays_get(sr, 0), tkb_arrays_get(outs[0], 0)));
  CHECK_OK(tkb_std_fn_call(fr, sr, &or));
  CHECK(all_close(tkb_arrays_get(or, 1), tkb_arrays_get(sr, 0), 0));
  tkb_std_fn_free(fr);
  tkb_arrays_free(sr);
  /* wrong args to f_std */
  CHECK_ERR(tkb_std_fn_call(f[0], sa[2], &outs2), TKB_ERR_BAD_SHAPE, "takes 2 arrays but 1");
  CHECK_ERR(tkb_std_fn_call(f[2], sa[0], &outs2), TKB_ERR_BAD_SHAPE, "takes 1 arrays but 2");
  for (int m = 0; m < 4; m++) {
    tkb_std_fn_free(f[m]);
    tkb_arrays_free(sa[m]);
  }
}

static void test_concrete_and_statics(void) {
  float xs[6] = {1, 2, 3, 4, 5, 6};
  tkb_spec s = TKB_SPEC(TKB_FLOAT32, 2, 3);
  tkb_array *x;
  CHECK_OK(tkb_array_wrap(&s, xs, &x));
  tkb_value args[] = {TKB_ARRAY(x)};
  tkb_kwarg kw[] = {{"tag", TKB_STRING("hello")}, {"double_it", TKB_BOOL(true)}};
  tkb_std_fn *f;
  tkb_arrays *sa, *outs;
  CHECK_OK(tkb_standardize_function(&toy_fn, args, 1, kw, 2, NULL, &f, &sa));
  CHECK(tkb_arrays_count(sa) == 1);
  CHECK(tkb_arrays_get(sa, 0) != x && tkb_array_equal(tkb_arrays_get(sa, 0), x));
  CHECK(strcmp(tkb_std_fn_statics(f), "alpha=1, tag='hello', double_it=true") == 0);
  tkb_array_free(x); /* f_std holds its own copy */
  CHECK_OK(tkb_std_fn_call(f, sa, &outs));
  CHECK(((float *)tkb_arrays_get(outs, 0)->data)[5] == 12.0f);
  tkb_std_fn_free(f);
  tkb_arrays_free(sa);
}

static void test_no_init(void) {
  tkb_value args[] = {TKB_ABSTRACT(S)};
  tkb_std_opts o = {.no_init = true};
  tkb_std_fn *f;
  tkb_arrays *sa, *outs;
  size_t before = tkb_device_bytes_in_use(NULL);
  CHECK_OK(tkb_standardize_function(&toy_fn, args, 1, NULL, 0, &o, &f, &sa));
  CHECK(tkb_arrays_count(sa) == 1 && tkb_arrays_get(sa, 0)->data == NULL);
  CHECK(tkb_spec_equal(&tkb_arrays_get(sa, 0)->spec, &S));
  CHECK(tkb_device_bytes_in_use(NULL) == before);
  CHECK_ERR(tkb_std_fn_call(f, sa, &outs), TKB_ERR_INVALID_ARGUMENT, "no_init");
  tkb_std_fn_free(f);
  tkb_arrays_free(sa);
  o.mode = TKB_MODE_VJP;
  CHECK_OK(tkb_standardize_function(&toy_fn, args, 1, NULL, 0, &o, &f, &sa));
  CHECK(tkb_arrays_count(sa) == 1 && strcmp(tkb_arrays_name(sa, 0), "dout") == 0);
  tkb_std_fn_free(f);
  tkb_arrays_free(sa);
}

/* Tokamax's idempotence: standardizing f_std again with its args changes nothing. */
static void test_idempotence(void) {
  for (int m = 0; m < 4; m++) {
    tkb_value args[] = {TKB_ABSTRACT(S), TKB_ABSTRACT(S)};
    tkb_std_opts o = {.mode = (tkb_mode)m, .seed = 5};
    tkb_std_fn *f, *g;
    tkb_arrays *sa, *sb, *oa, *ob;
    CHECK_OK(tkb_standardize_function(&toy_fn, args, 2, NULL, 0, &o, &f, &sa));
    const tkb_fn *as = tkb_std_fn_as_fn(f);
    tkb_value again[2];
    for (size_t k = 0; k < tkb_arrays_count(sa); k++) again[k] = TKB_ARRAY(tkb_arrays_get(sa, k));
    tkb_std_opts fwd = {.seed = 99};
    CHECK_OK(tkb_standardize_function(as, again, tkb_arrays_count(sa), NULL, 0, &fwd, &g, &sb));
    CHECK(tkb_arrays_count(sa) == tkb_arrays_count(sb));
    for (size_t k = 0; k < tkb_arrays_count(sa); k++) {
      CHECK(tkb_array_equal(tkb_arrays_get(sa, k), tkb_arrays_get(sb, k)));
      CHECK(strcmp(tkb_arrays_name(sa, k), tkb_arrays_name(sb, k)) == 0);
    }
    CHECK_OK(tkb_std_fn_call(f, sa, &oa));
    CHECK_OK(tkb_std_fn_call(g, sb, &ob));
    CHECK(tkb_arrays_count(oa) == tkb_arrays_count(ob));
    for (size_t k = 0; k < tkb_arrays_count(oa); k++)
      CHECK_MSG(tkb_array_equal(tkb_arrays_get(oa, k), tkb_arrays_get(ob, k)), "mode %d output %zu", m, k);
    tkb_std_fn_free(g);
    tkb_arrays_free(sb);
    tkb_std_fn_free(f);
    tkb_arrays_free(sa);
  }
}

static tkb_status fill_iota(tkb_array *a, const tkb_init_ctx *ctx) {
  /* a callback initializer sees the bound call */
  const tkb_spec *x = tkb_args_spec(ctx->call, "x");
  if (!x) return tkb_set_error(TKB_ERR_INTERNAL, "no x in call");
  for (int64_t i = 0; i < a->numel; i++) ((float *)a->data)[i] = (float)i + (float)(intptr_t)ctx->user;
  return TKB_OK;
}

static void test_initializers(void) {
  tkb_init iota = TKB_INIT_CALLBACK_(fill_iota, (void *)(intptr_t)100);
  tkb_init ones = TKB_INIT_CONSTANT_(1.0);
  tkb_value args[] = {TKB_ABSTRACT_INIT(S, &iota), TKB_ABSTRACT_INIT(S, &ones)};
  tkb_std_fn *f;
  tkb_arrays *sa;
  CHECK_OK(tkb_standardize_function(&toy_fn, args, 2, NULL, 0, NULL, &f, &sa));
  CHECK(((float *)tkb_arrays_get(sa, 0)->data)[3] == 103.0f);
  CHECK(((float *)tkb_arrays_get(sa, 1)->data)[31] == 1.0f);
  tkb_std_fn_free(f);
  tkb_arrays_free(sa);
  /* Each abstract array gets its own stream: same spec, different data. */
  tkb_value two[] = {TKB_ABSTRACT(S), TKB_ABSTRACT(S)};
  CHECK_OK(tkb_standardize_function(&toy_fn, two, 2, NULL, 0, NULL, &f, &sa));
  CHECK(!tkb_array_equal(tkb_arrays_get(sa, 0), tkb_arrays_get(sa, 1)));
  tkb_std_fn_free(f);
  tkb_arrays_free(sa);
}

int main(void) {
  test_positional_equals_keyword();
  test_binding_errors();
  test_modes();
  test_concrete_and_statics();
  test_no_init();
  test_idempotence();
  test_initializers();
  return CHECK_DONE();
}
