// field.cc - a Google Benchmark program whose files hold what real ones do and tkbench
// must read as Google Benchmark writes them (gbench_files.sh):
//   field_work/1..26   26 small busy loops (the "26 entries x 5 repetitions" case)
//   field_ratio        a user counter that divides 0 by 0: Google Benchmark writes NaN
//   field_scaling/N    a complexity fit over N = 8..64: its BigO and RMS rows
//   field_fail         skipped with an error: one error row per repetition
#include <benchmark/benchmark.h>

#include <cstdint>

static uint64_t spin(int64_t steps) {
  uint64_t x = 88172645463325252ull;
  for (int64_t i = 0; i < steps; i++) x = x * 6364136223846793005ull + 1442695040888963407ull;
  return x;
}

static void field_work(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(spin(200 * state.range(0)));
}
BENCHMARK(field_work)->DenseRange(1, 26);

static void field_ratio(benchmark::State& state) {
  double hits = 0, lookups = 0;
  for (auto _ : state) benchmark::DoNotOptimize(spin(100));
  state.counters["hit_rate"] = hits / lookups; // 0/0: NaN
}
BENCHMARK(field_ratio);

static void field_scaling(benchmark::State& state) {
  const int64_t n = state.range(0);
  for (auto _ : state) benchmark::DoNotOptimize(spin(n * n));
  state.SetComplexityN(n);
}
BENCHMARK(field_scaling)->RangeMultiplier(2)->Range(8, 64)->Complexity(benchmark::oNSquared);

static void field_fail(benchmark::State& state) {
  for (auto _ : state) {
    state.SkipWithError("broken on purpose");
    break;
  }
}
BENCHMARK(field_fail);

BENCHMARK_MAIN();
