# check_json_keys.sh - `tkbench check`'s JSON report keeps the key set tools read: every
# key path of `check --filter '^cpu_96x96x64_forward_and_vjp_cpu$' --out x.json` (array
# indices collapsed, "checks[].outputs[].criteria.scale.threshold") equals
# golden/check_json_keys.txt, and the file is written whole (no temporary left beside it).
# TKB_UPDATE_GOLDEN=1 rewrites the golden file.
. "$(dirname "$0")/lib.bash"
GOLDEN=$(dirname "$0")/golden/check_json_keys.txt

expect 0 "1 passed, 0 failed" "$TKBENCH" check --filter '^cpu_96x96x64_forward_and_vjp_cpu$' --out "$TMP/x.json"
json_check "$TMP/x.json" 'd["summary"] == {"passed": 1, "failed": 0, "skipped": 0}'
json_check "$TMP/x.json" '0 < d["checks"][0]["outputs"][0]["diff"]["percent_close"] <= 1'
if [ "$(ls -A "$TMP")" = x.json ]; then pass; else fail "beside x.json: $(ls -A "$TMP")"; fi

python3 - "$TMP/x.json" "$GOLDEN" "${TKB_UPDATE_GOLDEN:-0}" >"$CAP/diff" 2>&1 <<'PY'
import json, sys
doc, golden_path, update = sys.argv[1], sys.argv[2], sys.argv[3] not in ("", "0")
keys = set()
def walk(node, path):
    if isinstance(node, dict):
        for k, v in node.items():
            p = f"{path}.{k}" if path else k
            keys.add(p)
            walk(v, p)
    elif isinstance(node, list):
        for v in node:
            walk(v, path + "[]")
walk(json.load(open(doc)), "")
if update:
    open(golden_path, "w").write("".join(k + "\n" for k in sorted(keys)))
    sys.exit(0)
want = {l.strip() for l in open(golden_path) if l.strip()}
missing, extra = sorted(want - keys), sorted(keys - want)
for k in missing: print("missing:", k)
for k in extra: print("new:    ", k)
sys.exit(1 if missing or extra else 0)
PY
if [ $? -eq 0 ]; then pass; else fail "check's JSON key set differs from $GOLDEN:
$(cat "$CAP/diff")"; fi
finish
