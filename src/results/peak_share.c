/* peak_share.c - an entry's throughput as a percent of the device's measured peaks, and
 * whether it is memory- or compute-bound, for every report: its GB/s against the copy
 * bandwidth, its GFLOP/s against the matrix-product rate of the dtype it computes in,
 * and the roofline's verdict (its flops per byte against the device's, the peak rate
 * over the peak bandwidth: below that ridge the memory limits it first).
 *
 * The compute dtype: the float64 references compute in float64 (dgemm's peak); the cpu
 * kernels compute bfloat16, float16 and float32 in float32 (sgemm's); an entry's data
 * dtype is its metadata "dtype". Off the cpu only the bandwidth is measured, so FLOP%
 * and the bound are unknown there. */
#include "results.h"

#include <math.h>
#include <string.h>

static const char *data_dtype(const tkb_benchmark_data *bd) {
  const char *d = tkb_benchmark_data_meta(bd, "dtype");
  return d ? d : "";
}

void tkb__peak_share_of(const tkb__peaks *p, const tkb__result *r, tkb__peak_share *out) {
  *out = (tkb__peak_share){.bandwidth_pct = NAN, .flops_pct = NAN, .peak_gbs = NAN, .peak_gflops = NAN};
  if (!p || !r->bd) return;
  double items_s, bytes_s, flops_s;
  tkb__throughput(r, r->bd->median_evaluation_time_ms, &items_s, &bytes_s, &flops_s);
  const bool f64 = (r->impl && !strcmp(r->impl, "reference")) || !strcmp(data_dtype(r->bd), "float64");
  out->compute_dtype = f64 ? "float64" : "float32";
  out->peak_gbs = p->copy_gbs;
  out->peak_gflops = f64 ? p->dgemm_gflops : p->sgemm_gflops;
  if (bytes_s > 0 && out->peak_gbs > 0) out->bandwidth_pct = 100 * bytes_s / 1e9 / out->peak_gbs;
  if (flops_s > 0 && out->peak_gflops > 0) out->flops_pct = 100 * flops_s / 1e9 / out->peak_gflops;
  const double bytes = r->counts.bytes, flops = r->counts.flops;
  if (!(out->peak_gbs > 0) || !(out->peak_gflops > 0) || !(bytes > 0 || flops > 0)) return;
  const double ridge = out->peak_gflops / out->peak_gbs; /* flops per byte */
  out->bound = bytes > 0 && flops / bytes < ridge ? "memory" : "compute";
}

void tkb__fmt_pct(double pct, char *buf, size_t cap) {
  if (!isfinite(pct)) snprintf(buf, cap, "-");
  else if (pct >= 9999.5) snprintf(buf, cap, ">9999%%");
  else if (pct >= 9.95) snprintf(buf, cap, "%.0f%%", pct);
  else snprintf(buf, cap, "%.1f%%", pct);
}
