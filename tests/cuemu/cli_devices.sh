# cli_devices.sh - `run --device cuda:all` on the emulated machine (TKB_PLUGIN_PATH set by
# CTest; TKB_EMU_DEVICES=2 makes it show two GPUs): one worker per visible GPU, each on
# its own shard, merged into one file that holds exactly the entries of the run on one
# device, each once, each file naming its GPU's UUID; CUDA_VISIBLE_DEVICES narrows the
# workers to the GPUs it lists; none visible is a usage error. The emulator's GPUs are one
# emulated device under two identities: this checks the workers, shards and merge, not
# two GPUs running at once. Arguments as the CLI tests': tkbench, plugin, main.
. "$(dirname "$0")/../cli/lib.bash"
cd "$TMP" || exit 1
export TKB_EMU_DEVICES=2
unset CUDA_VISIBLE_DEVICES

SEL=(--filter '^cpu_96x96x64_(forward|vjp|forward_res)_cuda$' --stop fixed --iterations 2 --experiments 1 --warmup once)
"$TKBENCH" run --device cuda:0 "${SEL[@]}" --benchmark_list_tests | sort >want
[ "$(wc -l <want)" = 3 ] && pass || fail "the selection: $(cat want)"

expect 0 "merged 3 entries from 2 files into all.json" "$TKBENCH" run --device cuda:all "${SEL[@]}" --out all.json
grep -q "cuda:0: every entry ran" "$CAP/err" && grep -q "cuda:1: every entry ran" "$CAP/err" && pass ||
  fail "the workers: $(cat "$CAP/err")"
json_check all.json "sorted(b['run_name'] for b in d['benchmarks']) == open('want').read().split()"
json_check all.json "[(f['device'], f['device_uuid'], f['shard']['index'], f['shard']['count']) for f in d['context']['merged']['files']] == [('cuda:0', 'GPU-746b6265-6d75-0000-0000-000000000000', 0, 2), ('cuda:1', 'GPU-746b6265-6d75-0000-0000-000000000001', 1, 2)]"
json_check all.json "sorted({b['tkbench']['shard'] for b in d['benchmarks']}) == [0, 1]"
# the tables of both workers reach stdout
[ "$(grep -c '_cuda ' "$CAP/out")" = 3 ] && pass || fail "the workers' tables: $(cat "$CAP/out")"

# under Slurm's shard K of N, device g runs part K x 2 + g of N x 2
expect 0 "merged" env SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_COUNT=2 "$TKBENCH" run --device cuda:all "${SEL[@]}" --out half.json
json_check half.json "[(f['shard']['index'], f['shard']['count']) for f in d['context']['merged']['files']] == [(2, 4), (3, 4)]"

# CUDA_VISIBLE_DEVICES: the second GPU alone is the process's cuda:0
expect 0 "merged 3 entries from 1 file" env CUDA_VISIBLE_DEVICES=1 "$TKBENCH" run --device cuda:all "${SEL[@]}" --out one.json
json_check one.json "[f['device_uuid'] for f in d['context']['merged']['files']] == ['GPU-746b6265-6d75-0000-0000-000000000001']"
expect 2 "no cuda device is available" env CUDA_VISIBLE_DEVICES= "$TKBENCH" run --device cuda:all "${SEL[@]}" --out none.json
expect 2 "--out must be json" "$TKBENCH" run --device cuda:all "${SEL[@]}" --out x.csv
[ ! -e none.json ] && [ ! -e x.csv ] && pass || fail "a refused run wrote a file"
finish
