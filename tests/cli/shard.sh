# shard.sh - --shard on the command line: the parts of the default selection, for several
# part counts, are disjoint and together the whole; auto takes the part from Slurm's
# array or task variables and gives what K/N gives; --shard-weights balances by an earlier
# run's times; the JSON context records the shard and the Slurm job; check takes --shard
# too; --device cpu:all runs one worker and merges its file; bad values are usage errors
# that run nothing.
. "$(dirname "$0")/lib.bash"
cd "$TMP" || exit 1

"$TKBENCH" run --benchmark_list_tests | sort >all
for n in 1 2 3 5; do
  : >union
  for ((k = 0; k < n; k++)); do
    "$TKBENCH" run --shard $k/$n --benchmark_list_tests >part.$k || fail "--shard $k/$n"
    cat part.$k >>union
  done
  if [ -z "$(sort union | uniq -d)" ]; then pass; else fail "$n parts overlap: $(sort union | uniq -d | head -3)"; fi
  if sort union | cmp -s - all; then pass; else fail "$n parts are not the whole selection"; fi
done

# auto, from Slurm's environment, is the same part
"$TKBENCH" run --shard 1/3 --benchmark_list_tests >explicit
env SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_COUNT=3 "$TKBENCH" run --benchmark_list_tests >array
env SLURM_ARRAY_TASK_ID=2 SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_MAX=3 "$TKBENCH" run --shard auto --benchmark_list_tests >bounds
env -u SLURM_ARRAY_TASK_ID SLURM_PROCID=1 SLURM_NTASKS=3 "$TKBENCH" run --benchmark_list_tests >tasks
for f in array bounds tasks; do cmp -s explicit $f && pass || fail "$f differs from --shard 1/3"; done
env SLURM_PROCID=0 SLURM_NTASKS=1 "$TKBENCH" run --benchmark_list_tests | sort | cmp -s - all && pass || fail "one task is not the whole"
expect 2 "SLURM_ARRAY_TASK_COUNT=(unset)" env SLURM_ARRAY_TASK_ID=1 "$TKBENCH" run --benchmark_list_tests

# the context says which part, and which job
SEL=(--filter '^cpu_96x96x64_' --stop fixed --iterations 2 --experiments 1 --warmup once --quiet)
expect 0 "" env SLURM_JOB_ID=77 SLURM_ARRAY_JOB_ID=76 SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_COUNT=2 \
  SLURMD_NODENAME=n3 "$TKBENCH" run "${SEL[@]}" --out s1.json
json_check s1.json "d['context']['shard'] == dict(d['context']['shard'], index=1, count=2, source='SLURM_ARRAY_TASK_ID', weights=None, selection_entries=8, entries=len(d['benchmarks']))"
json_check s1.json "d['context']['slurm'] == dict(job_id='77', array_job_id='76', array_task_id='1', procid=None, node='n3', cluster=None)"
json_check s1.json "d['context']['shard']['estimated_cost_s'] < d['context']['shard']['selection_estimated_cost_s']"
json_check s1.json "all(b['tkbench']['wall_s'] > 0 for b in d['benchmarks'])"
expect 0 "" env -u SLURM_JOB_ID -u SLURM_ARRAY_TASK_ID -u SLURM_PROCID "$TKBENCH" run "${SEL[@]}" --out whole.json
json_check whole.json "d['context']['shard'] is None and d['context']['slurm'] is None"

# weights: an earlier run's times; the parts are still the whole
: >union
for k in 0 1 2; do
  "$TKBENCH" run --filter '^cpu_96x96x64_' --shard $k/3 --shard-weights whole.json --benchmark_list_tests >>union
done
"$TKBENCH" run --filter '^cpu_96x96x64_' --benchmark_list_tests | sort >eight
sort union | cmp -s - eight && pass || fail "weighted parts are not the whole"
expect 0 "(costs from --shard-weights)" "$TKBENCH" run "${SEL[@]:0:10}" --shard 0/2 --shard-weights whole.json --format csv
python3 -c '
import json
d = json.load(open("whole.json"))
for b in d["benchmarks"]: b["tkbench"]["wall_s"] = 100.0 if b["run_name"].endswith("forward_cpu") else 1.0
json.dump(d, open("heavy.json", "w"))'
"$TKBENCH" run --filter '^cpu_96x96x64_' --shard 0/2 --shard-weights heavy.json --benchmark_list_tests >heavy
[ "$(cat heavy)" = cpu_96x96x64_forward_cpu ] && pass || fail "the heavy entry does not have a part to itself: $(cat heavy)"
expect 2 "--shard-weights: cannot read \"absent.json\"" "$TKBENCH" run --shard 0/2 --shard-weights absent.json

# check: the same parts
"$TKBENCH" check --filter '^cpu_96x96x64_forward_' --shard 0/2 >c0 2>"$CAP/err" || fail "check --shard 0/2: $(cat "$CAP/err")"
"$TKBENCH" check --filter '^cpu_96x96x64_forward_' --shard 1/2 >c1 2>"$CAP/err" || fail "check --shard 1/2"
"$TKBENCH" check --filter '^cpu_96x96x64_forward_' >c 2>/dev/null
[ "$(cat c0 c1 | grep -c '^PASS')" = "$(grep -c '^PASS' c)" ] && [ "$(grep -c '^PASS' c0)" -ge 1 ] && pass || fail "check's parts: $(cat c0 c1)"
grep -q "shard 1/2 (from --shard" "$CAP/err" && pass || fail "check says no shard: $(cat "$CAP/err")"

# more parts than entries: a part with none still writes its (empty) file, so merges work
expect 0 "" "$TKBENCH" run "${SEL[@]}" --shard 9/10 --out empty.json
json_check empty.json "d['benchmarks'] == [] and d['context']['shard']['entries'] == 0"

# --device cpu:all: one worker (the cpu is one device), its file merged into --out
expect 0 "merged 8 entries from 1 file into all.json" "$TKBENCH" run --device cpu:all "${SEL[@]:0:10}" --out all.json
json_check all.json "sorted({b['run_name'] for b in d['benchmarks']}) == open('eight').read().split() and len(d['benchmarks']) == 8"
expect 2 "--out must be json, not csv" "$TKBENCH" run --device cpu:all "${SEL[@]}" --out all.csv

# usage errors
expect 2 "K is 3; K counts from 0, so it is 0 to 2" "$TKBENCH" run --shard 3/3
expect 2 "\"1-3\" is not K/N or auto" "$TKBENCH" check --shard 1-3
expect 2 "N is 0" "$TKBENCH" run --shard=0/0
finish
