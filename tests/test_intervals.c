/*
 * test_intervals.c - the device-independent interval code every device backend shares
 * (src/core/intervals.c): union of overlapping, touching, nested, disjoint, unsorted and
 * empty sets, sums, the event-name filter (matching some, all, none; a bad regex), and
 * the Chrome trace-event JSON writer (parsed back with cJSON). Synthetic intervals only:
 * no device needed.
 */
#include "check.h"
#include "intervals.h"

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define IV(s, e, n) ((tkb_interval){.start_ns = (s), .end_ns = (e), .name = (n)})

static int64_t uni(tkb_interval *iv, size_t n) { return tkb__intervals_union_ns(iv, n); }

static void test_union(void) {
  /* empty */
  CHECK(uni(NULL, 0) == 0);
  /* one */
  tkb_interval one[] = {IV(10, 25, "k")};
  CHECK(uni(one, 1) == 15);
  /* disjoint: 10 + 10 */
  tkb_interval disjoint[] = {IV(0, 10, "a"), IV(20, 30, "b")};
  CHECK(uni(disjoint, 2) == 20);
  /* overlapping: [0, 15) */
  tkb_interval overlap[] = {IV(0, 10, "a"), IV(5, 15, "b")};
  CHECK(uni(overlap, 2) == 15);
  /* touching merge into one span: [0, 20) */
  tkb_interval touch[] = {IV(0, 10, "a"), IV(10, 20, "b")};
  CHECK(uni(touch, 2) == 20);
  /* nested: the outer one counts once */
  tkb_interval nested[] = {IV(0, 100, "outer"), IV(10, 20, "inner"), IV(30, 40, "inner")};
  CHECK(uni(nested, 3) == 100);
  /* unsorted, mixed: [0, 10) + [12, 30) + [40, 41) = 10 + 18 + 1 */
  tkb_interval mixed[] = {IV(40, 41, "e"), IV(20, 30, "d"), IV(0, 5, "a"), IV(12, 22, "c"),
                          IV(3, 10, "b")};
  CHECK(uni(mixed, 5) == 29);
  /* sorted in place by start */
  for (int i = 1; i < 5; i++) CHECK(mixed[i - 1].start_ns <= mixed[i].start_ns);
  /* zero-length and inverted intervals add nothing */
  tkb_interval degenerate[] = {IV(5, 5, "z"), IV(9, 3, "inv"), IV(0, 2, "a")};
  CHECK(uni(degenerate, 3) == 2);
  CHECK(tkb__intervals_sum_ns(degenerate, 3) == 2);
  /* the sum counts overlaps twice, the union once */
  tkb_interval ov2[] = {IV(0, 10, "a"), IV(5, 15, "b")};
  CHECK(tkb__intervals_sum_ns(ov2, 2) == 20);
  /* large timestamps (device clocks in ns since boot) */
  const int64_t t = (int64_t)1 << 50;
  tkb_interval big[] = {IV(t + 100, t + 300, "a"), IV(t, t + 150, "b")};
  CHECK(uni(big, 2) == 300);
  /* a larger random set against a brute-force count over a grid */
  enum { N = 200, SPAN = 5000 };
  tkb_interval r[N];
  static unsigned char covered[SPAN];
  memset(covered, 0, sizeof covered);
  uint32_t x = 12345;
  for (int i = 0; i < N; i++) {
    x = x * 1664525u + 1013904223u;
    int64_t s = (int64_t)(x % (SPAN - 60));
    x = x * 1664525u + 1013904223u;
    int64_t len = (int64_t)(x % 60);
    r[i] = IV(s, s + len, "r");
    for (int64_t k = s; k < s + len; k++) covered[k] = 1;
  }
  int64_t want = 0;
  for (int k = 0; k < SPAN; k++) want += covered[k];
  CHECK_MSG(uni(r, N) == want, "union %lld, brute force %lld", (long long)uni(r, N), (long long)want);
}

static void test_filter(void) {
  tkb__event_filter f;
  /* no pattern: keeps all */
  CHECK_OK(tkb__event_filter_init(&f, NULL));
  CHECK(tkb__event_filter_keeps(&f, "anything"));
  tkb__event_filter_free(&f);
  CHECK_OK(tkb__event_filter_init(&f, ""));
  CHECK(!f.active);
  tkb__event_filter_free(&f);

  static const char *const names[] = {"norm_fwd", "copy_buffer", "gemm_tile", "norm_bwd_dx"};
  tkb_interval iv[] = {IV(0, 10, names[0]), IV(10, 20, names[1]), IV(20, 40, names[2]),
                       IV(50, 55, names[3])};
  bool keep[4];
  /* searched anywhere in the name (like re.search) */
  CHECK_OK(tkb__event_filter_init(&f, "norm"));
  size_t k = tkb__event_filter_apply(&f, iv, 4, keep);
  CHECK(k == 2 && keep[0] && !keep[1] && !keep[2] && keep[3]);
  CHECK(iv[0].name == names[0] && iv[1].name == names[3]);
  CHECK(uni(iv, k) == 15);
  /* a memoized verdict is the same */
  CHECK(tkb__event_filter_keeps(&f, names[0]) && !tkb__event_filter_keeps(&f, names[1]));
  tkb__event_filter_free(&f);
  /* anchors and alternation (POSIX extended) */
  tkb_interval iv2[] = {IV(0, 10, names[0]), IV(10, 20, names[1]), IV(20, 40, names[2])};
  CHECK_OK(tkb__event_filter_init(&f, "^(gemm|copy)_"));
  k = tkb__event_filter_apply(&f, iv2, 3, keep);
  CHECK(k == 2 && !keep[0] && keep[1] && keep[2]);
  CHECK(uni(iv2, k) == 30); /* touching: [10, 40) */
  tkb__event_filter_free(&f);
  /* a filter that matches none */
  tkb_interval iv3[] = {IV(0, 10, names[0]), IV(10, 20, names[1])};
  CHECK_OK(tkb__event_filter_init(&f, "attention"));
  k = tkb__event_filter_apply(&f, iv3, 2, keep);
  CHECK(k == 0 && !keep[0] && !keep[1]);
  CHECK(uni(iv3, k) == 0);
  tkb__event_filter_free(&f);
  /* NULL names are "" */
  CHECK_OK(tkb__event_filter_init(&f, "^$"));
  CHECK(tkb__event_filter_keeps(&f, NULL));
  tkb__event_filter_free(&f);
  /* a bad regex names the pattern and the reason */
  CHECK_ERR(tkb__event_filter_init(&f, "gemm("), TKB_ERR_INVALID_ARGUMENT, "gemm(");
  CHECK(strstr(tkb_last_error(), "regular expression") != NULL);
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
    free(s);
    s = NULL;
  }
  if (s) s[n] = '\0';
  fclose(f);
  return s;
}

static void test_trace(void) {
  char path[] = "/tmp/tkb_test_trace_XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  if (fd < 0) return;
  close(fd);
  tkb_interval iv[] = {IV(1000500, 1002500, "k\"quoted\"\n"), IV(1000000, 1001000, "copy_buffer")};
  bool keep[] = {true, false};
  tkb__trace_info info = {.process = "opencl:0 (test)", .thread = "queue", .function = "fn",
                          .entry = "fn_96_vjp_opencl", .method = "profiler", .filter = "k",
                          .device_time_ms = 0.002, .host_time_ms = 0.01};
  CHECK_OK(tkb__trace_write(path, iv, 2, keep, &info));
  char *text = slurp(path);
  cJSON *root = text ? cJSON_Parse(text) : NULL;
  CHECK_MSG(root != NULL, "trace is not JSON:\n%s", text ? text : "(unreadable)");
  if (root) {
    cJSON *ev = cJSON_GetObjectItem(root, "traceEvents");
    CHECK(cJSON_IsArray(ev) && cJSON_GetArraySize(ev) == 4); /* 2 metadata + 2 events */
    cJSON *e0 = cJSON_GetArrayItem(ev, 2), *e1 = cJSON_GetArrayItem(ev, 3);
    CHECK(strcmp(cJSON_GetObjectItem(e0, "name")->valuestring, "k\"quoted\"\n") == 0);
    CHECK(strcmp(cJSON_GetObjectItem(e0, "ph")->valuestring, "X") == 0);
    /* microseconds from the earliest start: 0.5 us, 2 us long */
    CHECK_NEAR(cJSON_GetObjectItem(e0, "ts")->valuedouble, 0.5, 1e-9);
    CHECK_NEAR(cJSON_GetObjectItem(e0, "dur")->valuedouble, 2.0, 1e-9);
    CHECK_NEAR(cJSON_GetObjectItem(e1, "ts")->valuedouble, 0.0, 1e-9);
    CHECK(cJSON_GetObjectItem(e0, "args") == NULL);
    cJSON *args = cJSON_GetObjectItem(e1, "args");
    CHECK(args && cJSON_IsFalse(cJSON_GetObjectItem(args, "kept_by_filter")));
    cJSON *other = cJSON_GetObjectItem(root, "otherData");
    CHECK(other && strcmp(cJSON_GetObjectItem(other, "method")->valuestring, "profiler") == 0);
    CHECK_NEAR(cJSON_GetObjectItem(other, "device_time_ms")->valuedouble, 0.002, 1e-12);
    CHECK(strcmp(cJSON_GetObjectItem(other, "entry")->valuestring, "fn_96_vjp_opencl") == 0);
    /* the values are microseconds whatever displayTimeUnit says, and "ns" there made
     * Perfetto's importer of 2020-2021 read them as ns: none is written */
    CHECK(cJSON_GetObjectItem(root, "displayTimeUnit") == NULL);
    cJSON_Delete(root);
  }
  free(text);
  /* an empty trace is still valid JSON */
  CHECK_OK(tkb__trace_write(path, NULL, 0, NULL, &info));
  text = slurp(path);
  root = text ? cJSON_Parse(text) : NULL;
  CHECK(root && cJSON_GetArraySize(cJSON_GetObjectItem(root, "traceEvents")) == 2);
  cJSON_Delete(root);
  free(text);
  unlink(path);
  CHECK_ERR(tkb__trace_write("/nonexistent-dir/t.json", iv, 2, NULL, &info), TKB_ERR_IO,
            "/nonexistent-dir/t.json");
}

int main(void) {
  test_union();
  test_filter();
  test_trace();
  return CHECK_DONE();
}
