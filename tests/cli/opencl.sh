# opencl.sh - tkbench on opencl:0 as a user runs it: `run` gives the cpu's JSON schema
# (Google Benchmark's plus the tkbench object), `check` passes the OpenCL kernels against
# their references, profiler leaves its trace, a bad index is a usage error.
# Exit 77 (CTest: skipped) with the reason when this machine has no OpenCL device.
. "$(dirname "$0")/lib.bash"

why=$("$TKBENCH" info 2>&1 | grep -E '^  opencl:0 ' | grep 'not available')
if [ -n "$why" ]; then
  echo "SKIPPED: $(sed 's/^ *opencl:0 *//' <<<"$why")"
  exit 77
fi

one='^cpu_96x96x64_forward_'
expect 0 "wrote" "$TKBENCH" run --device opencl:0 --filter "${one}opencl\$" --iterations 3 --out "$TMP/cl.json"
expect 0 "wrote" "$TKBENCH" run --filter "${one}cpu\$" --iterations 3 --out "$TMP/cpu.json"
# the same keys and value kinds everywhere but in the free-form metadata
if python3 - "$TMP/cpu.json" "$TMP/cl.json" <<'PY'
import json, sys
def paths(v, p=""):
    out = set()
    if isinstance(v, dict):
        for k, x in v.items():
            out.add((p + "." + k, type(x).__name__ if x is not None else "float"))
            if k != "metadata":
                out |= paths(x, p + "." + k)
    elif isinstance(v, list):
        for x in v:
            out |= paths(x, p + "[]")
    return out
a, b = (paths(json.load(open(f))) for f in sys.argv[1:3])
a = {(k, "float" if t in ("int", "float") else t) for k, t in a}
b = {(k, "float" if t in ("int", "float") else t) for k, t in b}
if a != b:
    print("only cpu:", sorted(a - b), "\nonly opencl:", sorted(b - a))
sys.exit(0 if a == b and len(a) > 30 else 1)
PY
then pass; else fail "JSON schemas of cpu and opencl:0 runs differ"; fi
json_check "$TMP/cl.json" "d['benchmarks'][0]['tkbench']['metadata']['method'] == 'opencl_events' and d['context']['device'] == 'opencl:0'"

# profiler: a Chrome trace of the last call, named in the metadata
expect 0 "wrote" "$TKBENCH" run --device opencl:0 --filter "${one}opencl\$" --method profiler --iterations 2 --out "$TMP/p.json"
trace=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['benchmarks'][0]['tkbench']['metadata']['trace'])" "$TMP/p.json")
json_check "$trace" "any(e.get('name') == 'norm_fwd_rows' and e['ph'] == 'X' for e in d['traceEvents'])"
rm -f "$trace"

expect 0 "4 passed, 0 failed" "$TKBENCH" check --device opencl:0 --tag cpu --filter '^cpu_96x96x64_'
expect 2 "does not exist" "$TKBENCH" run --device opencl:7 --out "$TMP/x.json"
finish
