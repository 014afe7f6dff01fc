// keys.cc - a Google Benchmark program whose JSON holds every kind of row Google
// Benchmark writes (iterations and aggregates with a label, throughputs and a user
// counter; a run skipped with an error; with -DSKIP_WITH_MESSAGE, 1.8 and later, one
// skipped with a message), for gbench_keys.sh to compare tkbench's keys with.
#include <benchmark/benchmark.h>

static void keys_ok(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(state.iterations());
  state.SetItemsProcessed(state.iterations() * 1024);
  state.SetBytesProcessed(state.iterations() * 4096);
  state.counters["widgets"] = benchmark::Counter(3, benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel("keys");
}
BENCHMARK(keys_ok)->Repetitions(2)->Iterations(100);

static void keys_fail(benchmark::State& state) {
  for (auto _ : state) state.SkipWithError("broken on purpose");
}
BENCHMARK(keys_fail)->Iterations(1);

#ifdef SKIP_WITH_MESSAGE
static void keys_skip(benchmark::State& state) {
  for (auto _ : state) state.SkipWithMessage("skipped on purpose");
}
BENCHMARK(keys_skip)->Iterations(1);
#endif

BENCHMARK_MAIN();
