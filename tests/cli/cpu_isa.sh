# cpu_isa.sh - the cpu kernels' paths through the command line: `info` names the path
# (TKB_CPU_ISA forces one the CPU runs; an unknown value is a warning and the best path
# runs), a run records it (JSON context and metadata: cpu_isa), and `check` passes every
# cpu-tagged entry of the suite on every path this machine runs. TKB_TEST_PART=k/n
# (lib.bash's part_takes) gives a run every n-th path, and part 0 the rest; under
# TKB_TEST_QUICK (the sanitizer tree) only the forward mode is checked.
. "$(dirname "$0")/lib.bash"

# the paths this CPU runs: info says "this CPU runs up to X" when a lower one is forced
"$TKBENCH" info >"$CAP/info" 2>&1 || fail "info: $(cat "$CAP/info")"
best=$(sed -n 's/^  kernels    \([a-z0-9]*\).*/\1/p' "$CAP/info")
case "$best" in
  portable) paths="portable" ;;
  avx2) paths="portable avx2" ;;
  avx512) paths="portable avx2 avx512" ;;
  *) fail "info names no kernels path: $(cat "$CAP/info")"; paths="" ;;
esac
grep -q "the best this CPU runs" "$CAP/info" && pass || fail "info without TKB_CPU_ISA: $(grep kernels "$CAP/info")"

# the sanitizer tree (TKB_TEST_QUICK) checks the forward mode on each path: every kernel's
# memory use is already checked path by path in process (test_cpu_isa), and a check of
# every mode there took three minutes of the tree's seven
modes=()
[ -n "${TKB_TEST_QUICK:-}" ] && modes=(--mode forward)
i=0
for p in $paths; do
  part_takes $((i++)) || continue
  expect 0 "kernels    $p" env TKB_CPU_ISA=$p "$TKBENCH" info
  # the suite's cpu entries against their references on this path
  expect 0 " 0 failed" env TKB_CPU_ISA=$p "$TKBENCH" check "${modes[@]}"
  grep -q "^FAIL" "$CAP/out" && fail "check on $p: $(grep '^FAIL' "$CAP/out" | head -5)"
  [ -s "$CAP/err" ] && grep -q warning "$CAP/err" && fail "check on $p warned: $(cat "$CAP/err")"
done

# the rest is part 0's
if ! part_takes 0; then
  finish
  exit
fi

# a run records the path
env TKB_CPU_ISA=portable "$TKBENCH" run --filter '^cpu_96x96x64_forward_cpu$' --iterations 2 \
  --quiet --out "$TMP/p.json" 2>"$CAP/err" && pass || fail "run: $(cat "$CAP/err")"
json_check "$TMP/p.json" "d['context']['cpu_isa'] == 'portable' and all(b['tkbench']['metadata']['cpu_isa'] == 'portable' for b in d['benchmarks'] if 'tkbench' in b)"

# a value that names no path: the best path, and a warning saying why
expect 0 "TKB_CPU_ISA=sse4 is not a cpu kernel path" env TKB_CPU_ISA=sse4 "$TKBENCH" info
grep -q "kernels    $best" "$CAP/out" && pass || fail "TKB_CPU_ISA=sse4 took $(grep kernels "$CAP/out")"
expect 0 "TKB_CPU_ISA=sse4 is not a cpu kernel path" env TKB_CPU_ISA=sse4 "$TKBENCH" check \
  --filter '^cpu_96x96x64_forward_cpu$'
env TKB_CPU_ISA=sse4 "$TKBENCH" run --filter '^cpu_96x96x64_forward_cpu$' --iterations 2 \
  --quiet --out "$TMP/w.json" 2>"$CAP/err" && pass || fail "run: $(cat "$CAP/err")"
json_check "$TMP/w.json" "d['context']['cpu_isa'] == '$best' and any('TKB_CPU_ISA=sse4' in w for w in d['context']['warnings'])"
finish
