# init.sh - `run --init ARG=DIST`: the distribution recorded in the JSON, the data it
# gives (a subnormal x makes the layer norm's output differ from a default run's), and
# every refusal with exit 2 and no output file.
. "$(dirname "$0")/lib.bash"

F='^cpu_96x96x64_forward_(cpu|reference)$'
expect 0 "" "$TKBENCH" run --filter "$F" --iterations 2 --experiments 1 --init 'x=zeros' \
  --init '*=normal(0,0.5)' --out "$TMP/init.json"
json_check "$TMP/init.json" "d['context']['init'] == 'x=zeros; *=normal(0,0.5)'"
json_check "$TMP/init.json" "len([b for b in d['benchmarks'] if b['run_type'] == 'iteration']) == 2"
# subnormal inputs run to the end with finite outputs (the run checks them)
expect 0 "" "$TKBENCH" run --filter "$F" --iterations 2 --experiments 1 --init 'x=subnormal' --quiet
expect 2 "no selected entry has an argument named nope" "$TKBENCH" run --filter "$F" --init 'nope=zeros' --out "$TMP/bad.json"
expect 2 "is no distribution" "$TKBENCH" run --filter "$F" --init 'x=gauss(0,1)' --out "$TMP/bad.json"
expect 2 "give ARG=DIST" "$TKBENCH" run --filter "$F" --init 'zeros' --out "$TMP/bad.json"
expect 2 "axis is a static value" "$TKBENCH" run --filter "$F" --init 'axis=ones' --out "$TMP/bad.json"
expect 2 "takes no normal distribution" "$TKBENCH" run --op ragged_dot --mode forward --impl cpu \
  --init 'group_sizes=normal(0,1)' --out "$TMP/bad.json"
[ ! -e "$TMP/bad.json" ] && pass || fail "an output file was written after a usage error"
finish
