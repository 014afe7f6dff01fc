# gbench_keys.sh - every key Google Benchmark writes, tkbench writes too: the key paths of
# a Google Benchmark JSON (context, and rows of each kind: iteration, aggregate by its
# name, error, skipped) against tkbench's rows of the same kinds, from entries built to
# have each kind (gbench/keys_plugin.c, loaded with --load).
#
# Google Benchmark's side: gbench/keys.cc, built and run here against libbenchmark-dev
# (installed when missing and root), and the stored gbench/keys_1.7.1.json that the
# same program wrote with Debian's 1.7.1, so the test runs without the package. On top of
# what 1.7.1 writes, the keys later versions add (src/json_reporter.cc): the context's
# aslr_enabled (1.8.4), and skipped/skip_message in a row skipped with a message (1.8).
. "$(dirname "$0")/lib.bash"
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
STORED=$HERE/gbench/keys_1.7.1.json

# tkbench's side
if ${CC:-cc} -shared -fPIC -I"$REPO/include" "$HERE/gbench/keys_plugin.c" -o "$TMP/keys.so" 2>"$CAP/err"
then pass; else fail "cannot build gbench/keys_plugin.c: $(cat "$CAP/err")"; finish; exit; fi
expect 1 "keys_fail_forward_c" "$TKBENCH" --benchmark_filter='^keys_' --load "$TMP/keys.so" \
  --benchmark_repetitions=2 --benchmark_min_time=3x --benchmark_out="$TMP/tkbench.json"
cp "$CAP/out" "$TMP/tkbench.out"; cp "$CAP/err" "$TMP/tkbench.err"

# Google Benchmark's side: a fresh run where it can be built, and the stored one always
gbench_jsons=("$STORED")
if ! [ -e /usr/include/benchmark/benchmark.h ] && [ "$(id -u)" -eq 0 ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends libbenchmark-dev \
    >/dev/null 2>&1 || true
fi
built=""
for flags in -DSKIP_WITH_MESSAGE ""; do
  if ${CXX:-c++} -O1 $flags -o "$TMP/gbench_keys" "$HERE/gbench/keys.cc" -lbenchmark -lpthread 2>/dev/null; then
    built=yes
    break
  fi
done
if [ -n "$built" ] && "$TMP/gbench_keys" --benchmark_format=json >"$TMP/gbench.json" 2>/dev/null; then
  gbench_jsons+=("$TMP/gbench.json")
else
  echo "note: no Google Benchmark program could be built here (libbenchmark-dev and c++); the stored $(basename "$STORED") is compared alone"
fi

python3 - "$TMP/tkbench.json" "${gbench_jsons[@]}" >"$CAP/diff" 2>&1 <<'PY'
import json, sys
tk = json.load(open(sys.argv[1]))
# keys Google Benchmark writes after 1.7.1 (src/json_reporter.cc): where they appear
LATER = {"context": {"aslr_enabled"}, "skipped": {"skipped", "skip_message"}}

def paths(node, prefix=""):
    out = set()
    if isinstance(node, dict):
        for k, v in node.items():
            p = f"{prefix}.{k}" if prefix else k
            out.add(p)
            out |= paths(v, p)
    elif isinstance(node, list):
        for v in node:
            out |= paths(v, prefix + "[]")
    return out

def kind(row):
    if row.get("skipped"):
        return "skipped"
    if row.get("error_occurred"):
        return "error"
    if row.get("run_type") == "aggregate":
        return "aggregate " + row.get("aggregate_name", "?")
    return "iteration"

def by_kind(doc):
    kinds = {"context": paths(doc["context"])}
    for row in doc["benchmarks"]:
        kinds.setdefault(kind(row), set()).update(paths(row))
    return kinds

have = by_kind(tk)
missing, pending = [], []
for path in sys.argv[2:]:
    want = by_kind(json.load(open(path)))
    for k, extra in LATER.items():
        if k in want or k == "context":
            want.setdefault(k, set()).update(extra)
        elif k == "skipped":
            want[k] = {"name", "family_index", "per_family_instance_index", "run_name", "run_type",
                       "repetitions", "repetition_index", "threads", "iterations", "real_time",
                       "cpu_time", "time_unit"} | extra
    for k, keys in sorted(want.items()):
        if k not in have:
            # tkbench writes a skipped row where an entry's setup is unsupported on the
            # device (keys_skip) once runs have a skipped status; until then it fails
            (pending if k == "skipped" else missing).append(f"{path}: tkbench writes no {k} row")
            continue
        # an array this machine leaves empty (no caches in sysfs) has no keys under it
        if not any(p.startswith("caches[].") for p in have[k]):
            keys = {p for p in keys if not p.startswith("caches[].")}
        for p in sorted(keys - have[k]):
            missing.append(f"{path}: {k}: {p}")
for m in pending:
    print("pending:", m)
for m in missing:
    print("missing:", m)
print(f"compared {len(sys.argv) - 2} Google Benchmark JSON(s) with {len(have)} kinds of tkbench rows")
sys.exit(1 if missing else 0)
PY
rc=$?
cat "$CAP/diff"
if [ $rc -eq 0 ]; then
  pass
else
  # what tkbench's run said and wrote, so that a failure seen once can be read
  echo "tkbench's rows (name, run_type, error, skipped):"
  python3 -c 'import json, sys
for r in json.load(open(sys.argv[1])).get("benchmarks", []):
    print("  ", r.get("name"), r.get("run_type"), r.get("error_message", ""), r.get("skipped", ""))' \
    "$TMP/tkbench.json" 2>&1
  echo "tkbench's output:"; cat "$TMP/tkbench.out" "$TMP/tkbench.err"
  fail "a key Google Benchmark writes is missing from tkbench's JSON"
fi
finish
