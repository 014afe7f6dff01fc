/*
 * test_cuda_nogpu.c - what the CUDA backend does that needs no GPU: attribution of
 * CUPTI-like activity records to timed calls (by correlation id and by time window),
 * their reduction through the shared interval code (sum for cupti, union for the
 * profiler, with nested and overlapping records), kernel names copied rather than kept
 * as borrowed pointers, store overflow reported, NVML absent handled, and cuda:0 on a
 * machine without a GPU or driver refused with one clear sentence; the ops' shape-fixed
 * work partitions that their C sides and kernels share. records.c and nvml.c are linked
 * in directly (host-only C, CMake's CUDA block).
 */
#include "check.h"
#include "intervals.h"
#include "nvml.h"
#include "records.h"
#include "../ops/normalization/norm_cuda.h"
#include "../ops/ragged_dot/rd_cuda.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static tkb_interval out[64];

static size_t pick(tkb_cu_store *s, uint64_t call, uint64_t ws, uint64_t we, unsigned kinds,
                   bool *by_corr, tkb_cu_attr_result *res) {
  tkb_cu_select sel = {.call = call, .win_start = ws, .win_end = we, .kinds = kinds};
  tkb_cu_attr_info info;
  *res = tkb_cu_attribute(s, &sel, out, 64, &info);
  *by_corr = info.by_correlation;
  return info.n;
}

/* Two calls whose records interleave in the buffers (CUPTI delivers per stream, out of
 * call order): correlation ids decide, not arrival or time. */
static void test_correlation(void) {
  tkb_cu_store *s = tkb_cu_store_new();
  CHECK(s != NULL);
  if (!s) return;
  /* call 7: API calls 100, 101, 102; call 8: 103, 104 */
  tkb_cu_add_link(s, 7, 100);
  tkb_cu_add_link(s, 8, 103);
  tkb_cu_add_record(s, TKB_CU_KERNEL, 1000, 1400, 100, "gemm");       /* call 7 */
  tkb_cu_add_record(s, TKB_CU_KERNEL, 5000, 5100, 103, "softmax");    /* call 8 */
  tkb_cu_add_record(s, TKB_CU_MEMCPY, 1400, 1500, 101, "memcpy DtoD"); /* call 7 */
  tkb_cu_add_link(s, 7, 101);
  tkb_cu_add_link(s, 7, 102);
  tkb_cu_add_record(s, TKB_CU_KERNEL, 1500, 1800, 102, "gemm");       /* call 7 */
  tkb_cu_add_record(s, TKB_CU_MEMSET, 900, 950, 99, "memset");        /* the cold-cache flush */
  tkb_cu_add_link(s, 8, 104);
  tkb_cu_add_record(s, TKB_CU_MEMSET, 5100, 5150, 104, "memset");     /* call 8 */
  bool by = false;
  tkb_cu_attr_result r;
  /* cupti: kernels only, summed: 400 + 300 */
  size_t n = pick(s, 7, 0, 0, TKB_CU_KIND_BIT(TKB_CU_KERNEL), &by, &r);
  CHECK(r == TKB_CU_ATTR_OK && by && n == 2);
  CHECK(tkb__intervals_sum_ns(out, n) == 700);
  CHECK(n == 2 && strcmp(out[0].name, "gemm") == 0 && out[0].name == out[1].name);
  /* profiler: kernels, copies and fills: the union of touching spans 1000..1800 */
  n = pick(s, 7, 0, 0, TKB_CU_ALL_KINDS, &by, &r);
  CHECK(r == TKB_CU_ATTR_OK && n == 3);
  CHECK(tkb__intervals_union_ns(out, n) == 800);
  n = pick(s, 8, 0, 0, TKB_CU_ALL_KINDS, &by, &r);
  CHECK(n == 2 && tkb__intervals_union_ns(out, n) == 150);
  n = pick(s, 8, 0, 0, TKB_CU_KIND_BIT(TKB_CU_KERNEL), &by, &r);
  CHECK(n == 1 && out[0].start_ns == 5000 && strcmp(out[0].name, "softmax") == 0);
  /* a call whose links all arrived but ran no kernel: nothing, still by correlation */
  tkb_cu_add_link(s, 9, 200);
  n = pick(s, 9, 6000, 7000, TKB_CU_KIND_BIT(TKB_CU_KERNEL), &by, &r);
  CHECK(n == 0 && by && r == TKB_CU_ATTR_OK);
  tkb_cu_store_free(s);
}

/* Links present, but a record that started inside the call's window is not linked: a
 * link went missing (or another thread used the GPU), so the sum would be short. */
static void test_stray(void) {
  tkb_cu_store *s = tkb_cu_store_new();
  if (!s) return;
  tkb_cu_add_link(s, 3, 50);
  tkb_cu_add_record(s, TKB_CU_KERNEL, 100, 200, 50, "linked");
  tkb_cu_add_record(s, TKB_CU_KERNEL, 200, 300, 51, "unlinked");
  tkb_cu_add_record(s, TKB_CU_MEMSET, 210, 220, 52, "memset"); /* a kind cupti does not keep */
  tkb_cu_add_record(s, TKB_CU_KERNEL, 10, 20, 49, "before");   /* outside the window: ignored */
  tkb_cu_select sel = {.call = 3, .win_start = 90, .win_end = 400,
                       .kinds = TKB_CU_KIND_BIT(TKB_CU_KERNEL)};
  tkb_cu_attr_info info;
  tkb_cu_attr_result r = tkb_cu_attribute(s, &sel, out, 64, &info);
  CHECK(r == TKB_CU_ATTR_STRAY && info.strays == 1 && info.links == 1 && info.n == 1);
  CHECK(info.stray_name && strcmp(info.stray_name, "unlinked") == 0);
  sel.kinds = TKB_CU_ALL_KINDS;
  r = tkb_cu_attribute(s, &sel, out, 64, &info);
  CHECK(r == TKB_CU_ATTR_STRAY && info.strays == 2);
  tkb_cu_store_free(s);
}

/* CUPTI writes 0 timestamps for a record it could not time: never a silent 0 ns. */
static void test_bad_time(void) {
  tkb_cu_store *s = tkb_cu_store_new();
  if (!s) return;
  tkb_cu_add_link(s, 4, 60);
  tkb_cu_add_record(s, TKB_CU_KERNEL, 100, 200, 60, "ok");
  tkb_cu_add_record(s, TKB_CU_KERNEL, 0, 0, 60, "untimed");
  tkb_cu_add_record(s, TKB_CU_KERNEL, 0, 0, 61, "other call's"); /* not linked: not ours */
  tkb_cu_select sel = {.call = 4, .win_start = 0, .win_end = 1000,
                       .kinds = TKB_CU_KIND_BIT(TKB_CU_KERNEL)};
  tkb_cu_attr_info info;
  CHECK(tkb_cu_attribute(s, &sel, out, 64, &info) == TKB_CU_ATTR_BAD_TIME);
  CHECK(info.bad_time == 1 && info.n == 1);
  /* without links an untimed record cannot be placed: counted */
  sel.call = 5;
  CHECK(tkb_cu_attribute(s, &sel, out, 64, &info) == TKB_CU_ATTR_BAD_TIME);
  CHECK(info.bad_time == 2 && !info.by_correlation && info.n == 1);
  /* end before start is as bad */
  tkb_cu_store_reset(s);
  tkb_cu_add_record(s, TKB_CU_KERNEL, 500, 400, 1, "backwards");
  CHECK(tkb_cu_attribute(s, &sel, out, 64, &info) == TKB_CU_ATTR_BAD_TIME && info.n == 0);
  tkb_cu_store_free(s);
}

/* No links (external correlation not reported): records that started in the window. */
static void test_window(void) {
  tkb_cu_store *s = tkb_cu_store_new();
  if (!s) return;
  tkb_cu_add_record(s, TKB_CU_KERNEL, 90, 120, 1, "earlier");  /* started before the call */
  tkb_cu_add_record(s, TKB_CU_KERNEL, 100, 300, 2, "outer");
  tkb_cu_add_record(s, TKB_CU_KERNEL, 150, 200, 3, "nested");  /* inside outer */
  tkb_cu_add_record(s, TKB_CU_KERNEL, 250, 400, 4, "overlap"); /* overlaps outer's end */
  tkb_cu_add_record(s, TKB_CU_KERNEL, 600, 700, 5, "gap");     /* after an idle gap */
  tkb_cu_add_record(s, TKB_CU_KERNEL, 1000, 1100, 6, "later"); /* starts at win_end */
  bool by = true;
  tkb_cu_attr_result r;
  size_t n = pick(s, 1, 100, 1000, TKB_CU_KIND_BIT(TKB_CU_KERNEL), &by, &r);
  CHECK(r == TKB_CU_ATTR_OK && !by && n == 4);
  /* cupti sums (200 + 50 + 150 + 100); the profiler unites ([100, 400] + [600, 700]) */
  CHECK(tkb__intervals_sum_ns(out, n) == 500);
  CHECK(tkb__intervals_union_ns(out, n) == 400);
  /* the profiler's name filter runs on these intervals like on OpenCL's */
  n = pick(s, 1, 100, 1000, TKB_CU_KIND_BIT(TKB_CU_KERNEL), &by, &r);
  tkb__event_filter f;
  CHECK_OK(tkb__event_filter_init(&f, "^(outer|gap)$"));
  bool keep[64];
  size_t k = tkb__event_filter_apply(&f, out, n, keep);
  CHECK(k == 2 && tkb__intervals_union_ns(out, k) == 300);
  tkb__event_filter_free(&f);
  tkb_cu_store_free(s);
}

/* Names are copies: the record's source buffer may be reused (CUPTI's is). */
static void test_names(void) {
  tkb_cu_store *s = tkb_cu_store_new();
  if (!s) return;
  char buf[300];
  snprintf(buf, sizeof buf, "void gemm_kernel<float>(int)");
  tkb_cu_add_link(s, 1, 10);
  tkb_cu_add_record(s, TKB_CU_KERNEL, 1, 10, 10, buf); /* (0 would read as untimed) */
  memset(buf, 'x', sizeof buf - 1);
  buf[sizeof buf - 1] = '\0'; /* a 299-character name: cut to TKB_CU_NAME_LEN - 1 */
  tkb_cu_add_record(s, TKB_CU_KERNEL, 10, 20, 10, buf);
  tkb_cu_add_record(s, TKB_CU_KERNEL, 20, 30, 10, NULL);
  bool by;
  tkb_cu_attr_result r;
  size_t n = pick(s, 1, 0, 0, TKB_CU_KIND_BIT(TKB_CU_KERNEL), &by, &r);
  CHECK(n == 3);
  CHECK(n == 3 && strcmp(out[0].name, "void gemm_kernel<float>(int)") == 0);
  CHECK(n == 3 && out[0].name != buf && out[1].name != buf);
  CHECK(n == 3 && strlen(out[1].name) == TKB_CU_NAME_LEN - 1 && out[1].name[0] == 'x');
  CHECK(n == 3 && strcmp(out[2].name, "?") == 0);
  /* interned: the same text is the same pointer (the profiler filter memoizes on it), and
   * names survive a reset (intervals of the last call outlive the next start) */
  const char *a = tkb_cu_intern(s, "void gemm_kernel<float>(int)");
  CHECK(n == 3 && a == out[0].name);
  CHECK(tkb_cu_intern(s, buf) == out[1].name);
  tkb_cu_store_reset(s);
  CHECK(strcmp(a, "void gemm_kernel<float>(int)") == 0);
  /* a full table says so rather than failing */
  for (int i = 0; i < TKB_CU_MAX_NAMES + 5; i++) {
    char nm[32];
    snprintf(nm, sizeof nm, "k%d", i);
    tkb_cu_intern(s, nm);
  }
  CHECK(strcmp(tkb_cu_intern(s, "one more"), "(name table full)") == 0);
  tkb_cu_store_free(s);
}

/* CUPTI's mangled kernel names are kept demangled (the test links libstdc++, as the plugin
 * does), so event filters and traces read "tkb_fill<0, 10>"; equal mangled names share
 * one entry; what is not a valid mangled name stays as given. */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

static void test_demangled_names(void) {
  char *self = __cxa_demangle("_Z1fv", NULL, NULL, NULL);
  CHECK(self && strcmp(self, "f()") == 0);
  free(self);
  tkb_cu_store *s = tkb_cu_store_new();
  if (!s) return;
  const char *m = "_ZN12_GLOBAL__N_18tkb_fillILi0ELi10EEEv16tkb_cu_fill_argsb";
  const char *d = tkb_cu_intern(s, m);
  CHECK_MSG(strcmp(d, "void (anonymous namespace)::tkb_fill<0, 10>(tkb_cu_fill_args, bool)") == 0, "%s", d);
  CHECK(tkb_cu_intern(s, m) == d);
  CHECK(strcmp(tkb_cu_intern(s, "_Znot a name"), "_Znot a name") == 0);
  CHECK(strcmp(tkb_cu_intern(s, "norm_fwd_row"), "norm_fwd_row") == 0);
  CHECK(s->n_names == 3);
  tkb_cu_store_free(s);
}

/* Overflow: records past the store are counted and make attribution fail (never a short
 * time); more matches than the caller's room are TOO_MANY with the full count. */
static void test_overflow(void) {
  tkb_cu_store *s = tkb_cu_store_new();
  if (!s) return;
  tkb_cu_add_link(s, 1, 5);
  for (int i = 1; i <= 100; i++) tkb_cu_add_record(s, TKB_CU_KERNEL, (uint64_t)i, (uint64_t)i + 1, 5, "k");
  bool by;
  tkb_cu_attr_result r;
  size_t n = pick(s, 1, 0, 0, TKB_CU_ALL_KINDS, &by, &r);
  CHECK(r == TKB_CU_ATTR_TOO_MANY && n == 100);
  tkb_cu_store_reset(s);
  for (size_t i = 0; i < TKB_CU_MAX_RECORDS + 3; i++) tkb_cu_add_record(s, TKB_CU_KERNEL, 0, 1, 77, "k");
  CHECK(s->lost_rec == 3);
  n = pick(s, 1, 0, 0, TKB_CU_ALL_KINDS, &by, &r);
  CHECK(r == TKB_CU_ATTR_LOST);
  tkb_cu_store_reset(s);
  CHECK(s->lost_rec == 0 && s->n_rec == 0);
  tkb_cu_store_free(s);
}

static void test_nvml_absent(void) {
  tkb_nvml *n = tkb_nvml_open("libtkbench-no-such-nvml.so.1", "0000:00:00.0");
  CHECK(n != NULL);
  CHECK(!tkb_nvml_available(n));
  CHECK(strstr(tkb_nvml_why(n), "could not be loaded") != NULL);
  tkb_nvml_sample s = tkb_nvml_read(n);
  CHECK(!s.valid && !tkb_nvml_throttled(&s));
  tkb_nvml_close(n);
  /* the real name: absent on a machine without the driver, present on a GPU machine;
   * either way a handle and, when absent, a reason */
  n = tkb_nvml_open(NULL, "0000:00:00.0");
  CHECK(n != NULL && (tkb_nvml_available(n) || strlen(tkb_nvml_why(n)) > 20));
  tkb_nvml_close(n);
  char buf[128];
  tkb_nvml_reason_names(0, buf, sizeof buf);
  CHECK(strcmp(buf, "none") == 0);
  tkb_nvml_reason_names(TKB_NVML_REASON_GPU_IDLE | TKB_NVML_REASON_HW_THERMAL, buf, sizeof buf);
  CHECK(strcmp(buf, "gpu_idle,hw_thermal") == 0);
  tkb_nvml_sample hot = {.valid = true, .reasons = TKB_NVML_REASON_SW_POWER_CAP};
  tkb_nvml_sample idle = {.valid = true, .reasons = TKB_NVML_REASON_GPU_IDLE};
  CHECK(tkb_nvml_throttled(&hot) && !tkb_nvml_throttled(&idle));
}

/* cuda:0 without a GPU: one sentence naming the device and the reason. */
static void test_device(void) {
  tkb_device *d = NULL;
  tkb_status st = tkb_device_get("cuda:0", &d);
  if (st == TKB_OK) {
    printf("note: cuda:0 is present (%s); the no-GPU device checks do not apply\n",
           tkb_device_description(d));
    CHECK(strcmp(tkb_device_methods(d)[0], "cupti") == 0);
    return;
  }
  const char *e = tkb_last_error();
  printf("cuda:0: %s\n", e);
  CHECK(st == TKB_ERR_DEVICE);
  CHECK(strstr(e, "device \"cuda:0\" is not available") == e);
  CHECK(strstr(e, "driver") != NULL || strstr(e, "CUDA backend") != NULL);
  CHECK(strchr(e, '\n') == NULL);
  /* asked again: the same answer, nothing half-open */
  CHECK_ERR(tkb_device_get("cuda:1", &d), TKB_ERR_DEVICE, "cuda:1");
}

/* The shape-fixed partitions that an op's C side (workspace sizes) and its kernels
 * (grids, sum orders) compute from the same header: normalization's blocks of lanes for
 * the dscale/doffset partial sums, ragged_dot's few-row segments and split of K. */
static void test_partitions(void) {
  CHECK(tkb_norm_cu_block_lanes(768 * 768, 128, 1) == 256);       /* rows of groups */
  CHECK(tkb_norm_cu_block_lanes(768 * 768, 128, 768 * 768) == 256); /* other axes */
  CHECK(tkb_norm_cu_block_lanes(8192, 1024, 1) == 8);              /* a block per row */
  CHECK(tkb_norm_cu_block_lanes(1 << 20, 4096, 1) == 32);
  CHECK(tkb_norm_cu_block_lanes(100, 8192, 1) == 1);
  for (int64_t lanes = 1; lanes < 200000; lanes = lanes * 5 / 4 + 1) {
    const int64_t l = tkb_norm_cu_block_lanes(lanes, 1024, 1);
    /* a power of two in [1, 32]: as large as leaves ~1024 blocks */
    CHECK_MSG(l >= 1 && l <= NORM_CU_BLOCK_LANES_LONG && (l & (l - 1)) == 0 &&
                  (l == 1 || l * 1024 <= lanes) && (l == NORM_CU_BLOCK_LANES_LONG || 2 * l * 1024 > lanes),
              "lanes %lld: %lld per block", (long long)lanes, (long long)l);
  }
  /* at most ceil(M / 8) pieces of whole groups plus one cut per non-empty group */
  CHECK(tkb_rd_cu_small_segments(8, 8) == 9);
  CHECK(tkb_rd_cu_small_segments(64, 256) == 72);
  CHECK(tkb_rd_cu_small_segments(1, 256) == 2);
  CHECK(tkb_rd_cu_small_segments(0, 8) == 0);
  /* Tokamax's memory_bound: 9 segments x 16 tiles of 256 columns, 2048 warps: 15 splits */
  CHECK(tkb_rd_cu_small_splits(8, 4096, 4096, 8, 2) == 15);
  const int64_t ks[] = {1, 63, 64, 700, 4096, 131072}, ns[] = {1, 20, 264, 4096, 14336},
                gs[] = {1, 8, 256}, es[] = {2, 4, 8};
  int bad = 0;
  for (int64_t m = 1; m <= RD_CU_SMALL_M; m++)
    for (size_t a = 0; a < 6; a++)
      for (size_t b = 0; b < 5; b++)
        for (size_t c = 0; c < 3; c++)
          for (size_t d = 0; d < 3; d++) {
            const int64_t k = ks[a], n = ns[b], sp = tkb_rd_cu_small_splits(m, k, n, gs[c], es[d]);
            const int64_t most = k / 64 > 1 ? k / 64 : 1, cap = m * n > (1 << 22) ? m * n : (1 << 22);
            if (sp < 1 || sp > most || sp * m * n > cap) {
              if (bad++ < 5)
                CHECK_MSG(0, "splits(%lld, %lld, %lld, %lld, %lld) = %lld", (long long)m, (long long)k,
                          (long long)n, (long long)gs[c], (long long)es[d], (long long)sp);
            }
          }
  CHECK_MSG(bad == 0, "%d split counts out of bounds", bad);
}

int main(void) {
  test_partitions();
  test_correlation();
  test_stray();
  test_bad_time();
  test_window();
  test_names();
  test_demangled_names();
  test_overflow();
  test_nvml_absent();
  test_device();
  return CHECK_DONE();
}
