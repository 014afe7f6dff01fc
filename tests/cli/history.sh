# history.sh - the results store from the command line: run --history twice (the flag,
# then TKB_HISTORY), check and ab recording too, a run stopped by SIGTERM recording what
# finished; `history list`, `show`, `export` (JSON, CSV), `import` (a run's own --out file
# gives the same numbers as its --history record; Google Benchmark's JSON with --commit,
# --branch, --machine), `prune`; and the usage errors, exit 2 with a message and nothing
# written: an unknown machine or entry, a malformed URL, a commit that is not hex, a file
# that is no results file, an unknown subcommand.
. "$(dirname "$0")/lib.bash"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$TMP" || exit 1
unset TKB_HISTORY TKB_COMMIT TKB_BRANCH TKB_MACHINE

DB=$TMP/h.sqlite
SEL=(--filter '^cpu_96x96x64_forward_(cpu|reference)$' --iterations 3 --experiments 1)
runs() { sqlite3 "$DB" 'SELECT count(*) FROM tkb_runs' 2>/dev/null || python3 -c '
import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM tkb_runs").fetchone()[0])' "$DB"; }

# ---- recording ----
expect 0 "recorded run 1 (2 entries) in $DB" "$TKBENCH" run "${SEL[@]}" --history "$DB" --commit 0123abc --branch main --out r1.json
TKB_HISTORY=$DB TKB_COMMIT=4567def TKB_BRANCH=feature expect 0 "recorded run 2" "$TKBENCH" run "${SEL[@]}"
expect 0 "recorded run 3 (1 entry)" "$TKBENCH" check --filter '^cpu_96x96x64_forward_cpu$' --history "$DB"
expect 0 "" "$TKBENCH" ab --a "$PLUGIN" --b "$PLUGIN" --filter '^relu_256x256_forward_c$' --stop fixed \
  --iterations 3 --experiments 2 --history "$DB" --commit 89abcde
[ "$(runs)" = 5 ] && pass || fail "5 runs expected after run, run, check and ab, the store has $(runs)"
# --quiet says nothing of the record
expect 0 "" "$TKBENCH" run "${SEL[@]}" --history "$DB" --quiet --commit 0123abc
! grep -q recorded "$CAP/err" && pass || fail "--quiet still said: $(cat "$CAP/err")"

# a run stopped by SIGTERM records what finished
"$TKBENCH" run --load "$FAULT_PLUGIN" --filter 'ok_first|slow|ok_last' --impl c --iterations 3 \
  --experiments 1 --history "$DB" --out term.json >"$CAP/out" 2>"$CAP/err" &
pid=$!
for _ in $(seq 400); do
  [ "$(cat term.json.partial.jsonl 2>/dev/null | wc -l)" -ge 2 ] && break
  sleep 0.05
done
sleep 0.2
kill -TERM $pid
wait $pid
rc=$?
[ $rc = 143 ] && pass || fail "SIGTERM: exit $rc, want 143: $(cat "$CAP/err")"
grep -q "recorded run 7 (1 entry)" "$CAP/err" && pass || fail "the stopped run was not recorded: $(cat "$CAP/err")"

# ---- list, show, export ----
expect 0 "RUN" "$TKBENCH" history list --history "$DB"
for want in "run      complete    0123abc" "feature" "check" "ab:A" "ab:B" "interrupted"; do
  grep -qF -- "$want" "$CAP/out" && pass || fail "list lacks '$want': $(cat "$CAP/out")"
done
MACHINE=$(awk 'NR == 2 { print $1 }' "$CAP/out")
[ -n "$MACHINE" ] && pass || fail "no machine in list: $(cat "$CAP/out")"
TKB_HISTORY=$DB expect 0 "cpu_96x96x64_forward_cpu on $MACHINE: 3 points" \
  "$TKBENCH" history show --filter '^cpu_96x96x64_forward_cpu$'
grep -q "0123abc.*main" "$CAP/out" && grep -q "4567def.*feature" "$CAP/out" && pass || fail "show: $(cat "$CAP/out")"
expect 0 "1 point" "$TKBENCH" history show --history "$DB" --impl reference --branch feature --machine "$MACHINE"
expect 0 "" "$TKBENCH" history export --history "$DB" --op normalization --out all.json
json_check all.json "sorted(s['name'] for s in d['series']) == ['cpu_96x96x64_forward_cpu', 'cpu_96x96x64_forward_reference'] and all(len(s['points']) == 3 and all(p['unit'] == 'ns' and p['median'] > 0 and p['n'] == 3 for p in s['points']) for s in d['series'])"
expect 0 "" "$TKBENCH" history export --history "$DB" --filter reference --last 2 --format csv
[ "$(wc -l <"$CAP/out")" = 2 ] && head -1 "$CAP/out" | grep -q '^machine,entry,op,spec,impl,mode,run,time,commit' && pass ||
  fail "csv: $(cat "$CAP/out")"

# a run's own file, imported, is the same record as its --history one
expect 0 "imported r1.json as run 1 (2 entries)" "$TKBENCH" history import --history "$TMP/again.sqlite" r1.json \
  --commit 0123abc
"$TKBENCH" history export --history "$TMP/again.sqlite" >again.json
"$TKBENCH" history export --history "$DB" >first.json
python3 - first.json again.json <<'PY' && pass || fail "the imported --out file differs from the --history record"
import json, sys
first = {s['name']: s['points'][0] for s in json.load(open(sys.argv[1]))['series']}
again = {s['name']: s['points'][0] for s in json.load(open(sys.argv[2]))['series']}
keys = ['median', 'ci_low', 'ci_high', 'n', 'min', 'p10', 'p25', 'p75', 'p90', 'max', 'commit', 'time']
sys.exit(0 if again and all(first[k][x] == again[k][x] for k in again for x in keys) else 1)
PY
# Google Benchmark's file
GB=$ROOT/tests/fixtures/gbench_repetitions.json
expect 0 "imported $GB as run 8" "$TKBENCH" history import --history "$DB" "$GB" --commit abcdef0 --branch gb \
  --machine gbvm
expect 0 "on gbvm" "$TKBENCH" history show --history "$DB" --machine gbvm
grep -q "abcdef0" "$CAP/out" && pass || fail "the import's commit is not shown: $(cat "$CAP/out")"

# ---- usage errors: exit 2, a message, nothing written ----
before=$(runs)
expect 2 "--machine 'nosuch' is no machine of the history store" "$TKBENCH" history show --history "$DB" --machine nosuch
expect 2 "no entry of the history store $DB has a point" "$TKBENCH" history show --history "$DB" --filter nosuch_entry
expect 2 "is not a PostgreSQL URL that libpq accepts" "$TKBENCH" run "${SEL[@]}" --history 'postgresql://me:pw@[::1/db'
! grep -q "pw@" "$CAP/err" && pass || fail "the URL's password was shown: $(cat "$CAP/err")"
expect 2 "is not a PostgreSQL URL" "$TKBENCH" history list --history 'postgres:///db?nosuchparam=1'
expect 2 "--commit goes with --history DB" "$TKBENCH" run "${SEL[@]}" --commit 0123abc
expect 2 "--commit 'xyz123' is not a commit id" "$TKBENCH" run "${SEL[@]}" --history "$DB" --commit xyz123
TKB_COMMIT=nothex expect 2 "TKB_COMMIT 'nothex' is not a commit id" "$TKBENCH" run "${SEL[@]}" --history "$TMP/nogit.sqlite"
expect 2 "--commit 'g123456' is not a commit id" "$TKBENCH" history import --history "$DB" r1.json --commit g123456
echo '{"not": "results"}' >bad.json
expect 2 "no \"benchmarks\" array" "$TKBENCH" history import --history "$DB" r1.json bad.json
echo 'not json at all' >bad.txt
expect 2 "bad.txt" "$TKBENCH" history import --history "$DB" bad.txt
[ "$(runs)" = "$before" ] && pass || fail "refused commands wrote runs: $before before, $(runs) after"
expect 2 "is not a tkbench history store" "$TKBENCH" history list --history bad.txt
expect 2 "'bogus' is not a subcommand" "$TKBENCH" history bogus --history "$DB"
expect 2 "needs a subcommand" "$TKBENCH" history --history "$DB"
expect 2 "prune needs --keep-days N or --keep-runs N" "$TKBENCH" history prune --history "$DB"
expect 2 "--keep-runs is for prune only" "$TKBENCH" history list --history "$DB" --keep-runs 3
expect 2 "no history store at" "$TKBENCH" history list --history "$TMP/absent.sqlite"
[ ! -e "$TMP/absent.sqlite" ] && pass || fail "list created a store"
expect 2 "--since 'yesterday' is not a time" "$TKBENCH" history list --history "$DB" --since yesterday

# ---- prune ----
expect 0 "removed 0 runs" "$TKBENCH" history prune --history "$DB" --keep-days 3650
expect 0 "removed" "$TKBENCH" history prune --history "$DB" --keep-runs 2
expect 0 "" "$TKBENCH" history list --history "$DB" --machine "$MACHINE"
[ "$(grep -c "$MACHINE  *cpu" "$CAP/out")" = 2 ] && pass || fail "prune --keep-runs 2 left: $(cat "$CAP/out")"
finish
