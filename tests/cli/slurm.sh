# slurm.sh - `tkbench slurm` on a real one-node Slurm cluster (slurm_cluster.bash): 4
# shards of a small cpu selection and their merge job; the merged file holds exactly the
# entries of the unsharded selection, each once, and records each one's shard and host.
# Then a run whose shard 1 cannot write its file: the merge job (afterany) names it and
# merges shard 0's entries. Skips only where slurm-wlm and munge cannot be installed.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/slurm_cluster.bash"

if ! slurm_cluster_install; then
  echo "SKIPPED: $SLURM_CLUSTER_WHY"
  exit 77
fi
if [ "$(id -u)" != 0 ]; then
  echo "SKIPPED: running munged as the munge user and slurmd needs root"
  exit 77
fi
# the cluster's state lives in the build folder, beside the tkbench under test
STATE=$(dirname "$TKBENCH")/slurm-test.$$
trap 'slurm_cluster_stop; rm -rf "$TMP" "$CAP"' EXIT
if ! slurm_cluster_start "$STATE" >"$CAP/start" 2>&1; then
  fail "the cluster did not start: $(cat "$CAP/start")"
  finish
  exit 1
fi
pass

SEL=(--filter '^cpu_96x96x64_(forward|vjp)_' --stop fixed --iterations 2 --experiments 1 --warmup once)
"$TKBENCH" run "${SEL[@]}" --benchmark_list_tests | sort >"$TMP/want"
[ "$(wc -l <"$TMP/want")" -ge 4 ] && pass || fail "the selection is too small: $(cat "$TMP/want")"

# ---- 4 shards and their merge ----
cd "$TMP" || exit 1
expect 0 "in 4 shards as job" "$TKBENCH" slurm --shards 4 --dir run4 --time 10 -- "${SEL[@]}"
cp "$CAP/out" "$TMP/submitted"
ids=$(sed -n 's/^submitted .* as job \([0-9]*\) .* as job \([0-9]*\) .*/\1 \2/p' "$TMP/submitted")
if [ -z "$ids" ]; then
  fail "no job ids in: $(cat "$TMP/submitted")"
elif ! slurm_cluster_wait_jobs 240 $ids; then
  fail "jobs $ids still queued after 240 s: $(squeue 2>&1)"
fi
grep -qF "merged file: $TMP/run4/merged.json" "$TMP/submitted" && pass || fail "no merged file path in: $(cat "$TMP/submitted")"
[ -s run4/merged.json ] && pass || fail "no merged file; merge.log: $(cat run4/merge.log 2>&1); shard logs: $(cat run4/shard-*.log 2>&1)"
json_check run4/merged.json "sorted({b['run_name'] for b in d['benchmarks']}) == open('$TMP/want').read().split()"
# each entry once: one iteration row per entry, as --experiments 1 makes
json_check run4/merged.json "len([b for b in d['benchmarks'] if b['run_type'] == 'iteration']) == len(open('$TMP/want').read().split())"
# each shard ran in the array, and each entry says which shard and host it came from
for k in 0 1 2 3; do
  json_check run4/shard-$k.json "d['context']['shard']['index'] == $k and d['context']['shard']['count'] == 4 and d['context']['shard']['source'] == 'SLURM_ARRAY_TASK_ID' and d['context']['slurm']['array_task_id'] == '$k'"
done
json_check run4/merged.json "all(b['tkbench']['shard'] in range(4) and b['tkbench']['host_name'] for b in d['benchmarks'])"
grep -q "failed" run4/merge.log && grep -q "0 failed" run4/merge.log && pass || fail "merge.log: $(cat run4/merge.log)"

# ---- a shard that fails: afterany merges the rest and names it ----
mkdir -p run2/shard-1.json # a folder where shard 1's file goes: its run refuses --out
expect 0 "in 2 shards as job" "$TKBENCH" slurm --shards 2 --dir run2 --time 10 -- "${SEL[@]}"
ids=$(sed -n 's/^submitted .* as job \([0-9]*\) .* as job \([0-9]*\) .*/\1 \2/p' "$CAP/out")
slurm_cluster_wait_jobs 240 $ids || fail "jobs $ids still queued after 240 s"
grep -q "shard 1: exit status 2" run2/merge.log && pass || fail "merge.log: $(cat run2/merge.log 2>&1)"
grep -q "merged 1 of 2 shards" run2/merge.log && pass || fail "merge.log: $(cat run2/merge.log 2>&1)"
json_check run2/merged.json "{b['run_name'] for b in d['benchmarks']} == {b['run_name'] for b in json.load(open('run2/shard-0.json'))['benchmarks']}"

# ---- what is refused before anything is submitted ----
expect 2 "--shards N is required" "$TKBENCH" slurm -- "${SEL[@]}"
expect 2 "the run's --out is" "$TKBENCH" slurm --shards 2 --dir bad -- "${SEL[@]}" --out x.json
expect 2 "unknown flag '--bogus'" "$TKBENCH" slurm --shards 2 --dir bad -- --bogus
[ ! -e bad ] && pass || fail "a refused submission left files"
finish
