# executable.sh - the tkbench executable as a process: exit codes, the shipped ops,
# output files (complete or absent), and info.
. "$(dirname "$0")/lib.bash"

expect 2 "no command given" "$TKBENCH"
expect 0 "Commands:" "$TKBENCH" --help
expect 0 "Usage: tkbench run" "$TKBENCH" help run
expect 0 "tkbench 0." "$TKBENCH" --version
expect 0 "read cost" "$TKBENCH" info
expect 0 "normalization" "$TKBENCH" list --tag cpu
expect 2 "'frobnicate' is not a command" "$TKBENCH" frobnicate
# a typo gets the nearest name; a word far from every name gets the list
expect 2 "'rnu' is not a command; did you mean 'run'?" "$TKBENCH" rnu
expect 2 "'cmopare' is not a command; did you mean 'compare'?" "$TKBENCH" cmopare
expect 2 "unknown flag '--iteratons'; did you mean '--iterations'?" "$TKBENCH" run --iteratons 3
expect 2 "unknown flag '--fliter=x'; did you mean '--filter'?" "$TKBENCH" list --fliter=x
expect 2 "the commands are list, run" "$TKBENCH" zzzzzzzz
expect 2 "--iterations 0 is out of range" "$TKBENCH" run --iterations 0 --out "$TMP/x.json"
expect 2 "no entry matches --filter 'no_such_entry'" "$TKBENCH" run --filter no_such_entry --out "$TMP/x.json"
expect 2 "its directory does not exist" "$TKBENCH" run --load "$PLUGIN" --filter relu --out "$TMP/no/dir/x.json"
[ -z "$(ls -A "$TMP")" ] && pass || fail "files left after usage errors: $(ls -A "$TMP")"

# a run writes exactly the file asked for, in the format its extension asks for
expect 0 "wrote $TMP/r.csv (csv)" "$TKBENCH" run --load "$PLUGIN" --filter '^relu_256x256_forward_c$' \
  --iterations 2 --out "$TMP/r.csv"
head -1 "$TMP/r.csv" | grep -q '^name,op,spec,impl,mode,median_ms' && pass || fail "r.csv header"
[ "$(ls -A "$TMP")" = "r.csv" ] && pass || fail "stray files: $(ls -A "$TMP")"
# json on stdout is the whole document
"$TKBENCH" run --load "$PLUGIN" --filter '^relu_256x256_forward_c$' --iterations 2 --format json \
  > "$TMP/stdout.json" 2>/dev/null && pass || fail "run --format json"
json_check "$TMP/stdout.json" "len(d['benchmarks']) == 3 + 4 and d['context']['library'] == 'tkbench'"
finish
