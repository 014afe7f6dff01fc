# history_postgres.sh - the results store on a real PostgreSQL server (pg_server.bash:
# Debian's postgresql, a private cluster on a Unix socket under the build folder, stopped
# by its PID even when a check fails): the store checks of test_history through a
# postgresql:///tkb?host=SOCKET URL (record and read back, 4 writers at once with nothing
# lost, a version 1 store migrated, a newer schema refused, prune, 3000 entries), then the
# command line: run --history twice, 4 imports at once, list, show, export, and a server
# that is not there. Skips (77) only where the postgresql package cannot be installed.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/pg_server.bash"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TEST_HISTORY=$(dirname "$TKBENCH")/test_history
unset TKB_HISTORY TKB_COMMIT TKB_BRANCH TKB_MACHINE

if ! pg_server_install; then
  echo "SKIPPED: $PG_SERVER_WHY"
  exit 77
fi
# the server's files live in the build folder, beside the tkbench under test, when the
# postgres user can reach it
STATE=$(dirname "$TKBENCH")/pg-test.$$
if [ "$(id -u)" = 0 ] && ! runuser -u postgres -- test -x "$(dirname "$TKBENCH")" 2>/dev/null; then
  STATE=$(mktemp -d /tmp/tkb_pg_XXXXXX)
fi
trap 'pg_server_stop; rm -rf "$TMP" "$CAP"' EXIT
if ! pg_server_start "$STATE" >"$CAP/start" 2>&1; then
  fail "the server did not start: $(cat "$CAP/start")"
  finish
  exit 1
fi
pass
URL="postgresql:///tkb?host=$PG_SERVER_SOCKET&user=postgres"

# ---- the store's checks, as on SQLite ----
if [ -x "$TEST_HISTORY" ]; then
  "$TEST_HISTORY" "$URL" >"$CAP/out" 2>&1 && pass || fail "test_history on PostgreSQL: $(tail -n 30 "$CAP/out")"
  grep "recording a run" "$CAP/out"
  tail -n 1 "$CAP/out"
else
  fail "no test_history beside $TKBENCH to run the store's checks"
fi

# ---- the command line ----
DB="$URL&options=-csearch_path%3Dcli"
pg_server_psql "CREATE SCHEMA cli" || fail "CREATE SCHEMA cli"
cd "$TMP" || exit 1
SEL=(--filter '^cpu_96x96x64_forward_(cpu|reference)$' --iterations 3 --experiments 1)
expect 0 "recorded run 1 (2 entries)" "$TKBENCH" run "${SEL[@]}" --history "$DB" --commit 0123abc --out r.json
TKB_HISTORY=$DB expect 0 "recorded run 2" "$TKBENCH" run "${SEL[@]}" --commit 4567def
# 4 imports at once: every run kept
pids=()
for k in 1 2 3 4; do
  "$TKBENCH" history import --history "$DB" r.json --commit "abcdef$k" >"$CAP/import$k" 2>&1 &
  pids+=($!)
done
wait "${pids[@]}" # not the server, a child of this shell too
for k in 1 2 3 4; do grep -q "imported r.json as run" "$CAP/import$k" && pass || fail "import $k: $(cat "$CAP/import$k")"; done
n=$(pg_server_psql "SELECT 'runs=' || count(*) FROM cli.tkb_runs" 2>&1 | tr -d ' ' | grep '^runs=')
[ "$n" = "runs=6" ] && pass || fail "6 runs expected, the server says: $n"
expect 0 "postgresql" "$TKBENCH" history list --history "$DB"
expect 0 "cpu_96x96x64_forward_cpu on" "$TKBENCH" history show --history "$DB" --filter '^cpu_96x96x64_forward_cpu$'
grep -q "6 points" "$CAP/out" && pass || fail "show: $(cat "$CAP/out")"
expect 0 "" "$TKBENCH" history export --history "$DB" --out all.json
json_check all.json "len(d['series']) == 2 and all(len(s['points']) == 6 for s in d['series'])"
expect 0 "removed 4 runs" "$TKBENCH" history prune --history "$DB" --keep-runs 2
expect 2 "no entry of the history store" "$TKBENCH" history show --history "$DB" --filter nosuch
expect 2 "cannot connect to the history store" "$TKBENCH" run "${SEL[@]}" \
  --history "postgresql:///tkb?host=$TMP/nosocket&user=postgres"
finish
