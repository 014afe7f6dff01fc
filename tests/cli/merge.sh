# merge.sh - `tkbench merge`: two shards of a run merged back hold the unsharded run's
# entries, each naming its shard and host; a missing shard and another host are warned
# about; refused with exit 2, naming the files and the field, and nothing written: an
# entry in two files, another library version, method, seed or kind of device, a file cut
# short, a file that is not JSON, a Google Benchmark file among tkbench's. Google
# Benchmark files merge with each other, and a journal cut mid-line gives what it holds.
. "$(dirname "$0")/lib.bash"
FIX=$(cd "$(dirname "$0")/../fixtures" && pwd)
cd "$TMP" || exit 1

SEL=(--filter '^cpu_96x96x64_(forward|vjp)_' --stop fixed --iterations 2 --experiments 1 --warmup once --quiet)
"$TKBENCH" run "${SEL[@]}" --benchmark_list_tests | sort >want
N=$(wc -l <want) # entries, each one row (one experiment, no aggregates)
for k in 0 1; do
  "$TKBENCH" run "${SEL[@]}" --shard $k/2 --out s$k.json 2>"$CAP/err" || fail "shard $k: $(cat "$CAP/err")"
done

# ---- two shards merged ----
expect 0 "merged $N entries from 2 files into all.json" "$TKBENCH" merge s0.json s1.json -o all.json
json_check all.json "sorted({b['run_name'] for b in d['benchmarks']}) == open('want').read().split()"
json_check all.json "len(d['benchmarks']) == $N"
json_check all.json "[b['tkbench']['shard'] for b in d['benchmarks']] == [0] * len(json.load(open('s0.json'))['benchmarks']) + [1] * len(json.load(open('s1.json'))['benchmarks'])"
json_check all.json "all(b['tkbench']['host_name'] == d['context']['host_name'] for b in d['benchmarks'])"
json_check all.json "[f['path'] for f in d['context']['merged']['files']] == ['s0.json', 's1.json'] and d['context']['merged']['missing_shards'] == [] and d['context']['shard'] is None"
json_check all.json "len({b['family_index'] for b in d['benchmarks']}) == $N"
# the merged file reads back as any result file: it merges again, with --out and --
expect 0 "merged $N entries from 1 file" "$TKBENCH" merge --out again.json -- all.json

# ---- warned, not refused ----
expect 0 "1 of the 2 shards are missing (1)" "$TKBENCH" merge s0.json -o half.json
json_check half.json "d['context']['merged']['missing_shards'] == [1]"
python3 - <<'PY'
import json
d = json.load(open("s1.json"))
d["context"]["host_name"] = "node-b"
json.dump(d, open("s1_host.json", "w"))
PY
expect 0 "\"host_name\" (" "$TKBENCH" merge s0.json s1_host.json -o hosts.json
json_check hosts.json "{b['tkbench']['host_name'] for b in d['benchmarks'] if b['tkbench']['shard'] == 1} == {'node-b'}"

# ---- refused: exit 2, both files and the field named, nothing written ----
cp s0.json s0_again.json
expect 2 "is in both \"s0.json\" and \"s0_again.json\"" "$TKBENCH" merge s0.json s0_again.json -o dup.json
[ ! -e dup.json ] && pass || fail "a refused merge wrote dup.json"
for change in 'library_version="9.9.9"' 'method="cpu_time"' 'seed=7' 'stopping_rule="ci"' 'iterations=9'; do
  key=${change%%=*}
  python3 - "$change" <<'PY'
import json, sys
key, value = sys.argv[1].split("=", 1)
d = json.load(open("s1.json"))
d["context"][key] = json.loads(value)
json.dump(d, open("s1_bad.json", "w"))
PY
  expect 2 "\"s0.json\" and \"s1_bad.json\" differ in the context's \"$key\"" "$TKBENCH" merge s0.json s1_bad.json -o bad.json
done
python3 -c '
import json
d = json.load(open("s1.json"))
d["context"]["device"] = "cuda:0"
json.dump(d, open("s1_cuda.json", "w"))'
expect 2 "ran on different kinds of device" "$TKBENCH" merge s0.json s1_cuda.json -o bad.json
python3 -c '
t = open("s1.json").read()
at = t.index(",\n", len(t) // 2) + 2  # after a whole value: the brackets are left open
open("cut.json", "w").write(t[:at])' 
expect 2 "\"cut.json\" ends early" "$TKBENCH" merge s0.json cut.json -o bad.json
echo "not json" >text.json
expect 2 "\"text.json\" is not JSON" "$TKBENCH" merge s0.json text.json -o bad.json
: >empty.json
expect 2 "\"empty.json\" is empty" "$TKBENCH" merge s0.json empty.json -o bad.json
expect 2 "cannot read \"absent.json\"" "$TKBENCH" merge s0.json absent.json -o bad.json
expect 2 "Google Benchmark files merge only with each other" "$TKBENCH" merge s0.json "$FIX/gbench_repetitions.json" -o bad.json
expect 2 "Google Benchmark files merge only with each other" "$TKBENCH" merge "$FIX/gbench_repetitions.json" s0.json -o bad.json
[ ! -e bad.json ] && pass || fail "a refused merge wrote bad.json"
expect 2 "-o FILE is required" "$TKBENCH" merge s0.json s1.json
expect 2 "no result files to merge" "$TKBENCH" merge -o x.json
expect 2 "unknown flag '--bogus'" "$TKBENCH" merge --bogus s0.json -o x.json

# ---- Google Benchmark files with each other ----
python3 - "$FIX/gbench_repetitions.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for b in d["benchmarks"]:
    for k in ("name", "run_name"):
        if k in b: b[k] = "other_" + b[k]
json.dump(d, open("gb_other.json", "w"))
PY
expect 0 "merged" "$TKBENCH" merge "$FIX/gbench_repetitions.json" gb_other.json -o gb.json
json_check gb.json "all(b['shard'] is None and b['host_name'] for b in d['benchmarks']) and len(d['benchmarks']) == 2 * len(json.load(open('$FIX/gbench_repetitions.json'))['benchmarks'])"

# ---- a journal: what a shard finished, its cut-off last line left out ----
python3 - <<'PY'
import json
d = json.load(open("s1.json"))
lines = [json.dumps({"tkbench_journal": 1, "context": d["context"]})]
for b in d["benchmarks"]:
    lines.append(json.dumps({"benchmarks": [b]}))
text = "\n".join(lines[:-1]) + "\n" + lines[-1][: len(lines[-1]) // 2]
open("s1.json.partial.jsonl", "w").write(text)
PY
expect 0 "is cut off" "$TKBENCH" merge s0.json s1.json.partial.jsonl -o j.json
json_check j.json "len(d['benchmarks']) == $N - 1 and d['context']['interrupted'] is True and d['context']['merged']['files'][1]['kind'] == 'journal'"
finish
