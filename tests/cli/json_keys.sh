# json_keys.sh - the JSON report's key set stays what tools read: every key path of
# `run --filter '^cpu_96x96x64_' --iterations 3 --out x.json` (array indices collapsed,
# "benchmarks[].tkbench.metadata.method") equals golden/json_keys.txt.
# TKB_UPDATE_GOLDEN=1 rewrites the golden file.
. "$(dirname "$0")/lib.bash"
GOLDEN=$(dirname "$0")/golden/json_keys.txt

if "$TKBENCH" run --filter '^cpu_96x96x64_' --iterations 3 --quiet --out "$TMP/x.json" 2>"$CAP/err"
then pass; else fail "run --out x.json: $(cat "$CAP/err")"; fi

# Key paths, one a line, sorted. A path under an array that this machine leaves empty
# (no sysfs caches, no /proc/loadavg) cannot appear, so those are dropped from both sides.
python3 - "$TMP/x.json" "$GOLDEN" "${TKB_UPDATE_GOLDEN:-0}" >"$CAP/diff" 2>&1 <<'PY'
import json, sys
doc, golden_path, update = sys.argv[1], sys.argv[2], sys.argv[3] not in ("", "0")
keys, empty = set(), set()
def walk(node, path):
    if isinstance(node, dict):
        for k, v in node.items():
            p = f"{path}.{k}" if path else k
            keys.add(p)
            walk(v, p)
    elif isinstance(node, list):
        if not node:
            empty.add(path + "[]")
        for v in node:
            walk(v, path + "[]")
walk(json.load(open(doc)), "")
if update:
    open(golden_path, "w").write("".join(k + "\n" for k in sorted(keys)))
    sys.exit(0)
want = {l.strip() for l in open(golden_path) if l.strip()}
under_empty = lambda k: any(k.startswith(e + ".") for e in empty)
want = {k for k in want if not under_empty(k)}
missing, extra = sorted(want - keys), sorted(keys - want)
for k in missing: print("missing:", k)
for k in extra: print("new:    ", k)
sys.exit(1 if missing or extra else 0)
PY
if [ $? -eq 0 ]; then pass; else fail "JSON key set differs from $GOLDEN:
$(cat "$CAP/diff")"; fi
finish
