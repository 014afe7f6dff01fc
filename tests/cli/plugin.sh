# plugin.sh - `--load`: entries from a shared object, and the ways loading fails.
. "$(dirname "$0")/lib.bash"

# list and run the plugin's entries (the builtin ops are there too)
expect 0 "relu_256x256_forward_c" "$TKBENCH" list --load "$PLUGIN" --filter '^relu_'
expect 0 "4 of " "$TKBENCH" list --load "$PLUGIN" --filter '^relu_' --tag plugin
expect 0 "args    x: float32[256,256]" "$TKBENCH" list --load "$PLUGIN" --filter '^relu_256x256_forward_c$' --verbose
expect 0 "relu_1024x256_forward_and_vjp_c" "$TKBENCH" run --load "$PLUGIN" --filter '^relu_' \
  --iterations 2 --experiments 2 --out "$TMP/relu.json"
json_check "$TMP/relu.json" "sorted({b['run_name'] for b in d['benchmarks']}) == ['relu_1024x256_forward_and_vjp_c', 'relu_1024x256_forward_c', 'relu_256x256_forward_and_vjp_c', 'relu_256x256_forward_c'] and len(d['benchmarks']) == 4 * (2 + 4)"
json_check "$TMP/relu.json" "all(b['items_per_second'] > 0 for b in d['benchmarks'] if b['run_type'] == 'iteration')"
# --load alone chooses the plugin's entries, not the builtin suite beside them, and says so
expect 0 "the 4 entries of --load" "$TKBENCH" run --load "$PLUGIN" --mode forward,forward_and_vjp \
  --iterations 2 --experiments 1 --out "$TMP/only.json"
json_check "$TMP/only.json" "sorted({b['run_name'] for b in d['benchmarks']}) == ['relu_1024x256_forward_and_vjp_c', 'relu_1024x256_forward_c', 'relu_256x256_forward_and_vjp_c', 'relu_256x256_forward_c']"
expect 0 "4 of " "$TKBENCH" list --load "$PLUGIN"
# any other choice (here --op) chooses among every entry, as without --load
expect 0 "normalization" "$TKBENCH" list --load "$PLUGIN" --op normalization,relu
# a plugin named twice is loaded once
expect 0 "relu_256x256_forward_c" "$TKBENCH" list --load "$PLUGIN" --load "$PLUGIN" --filter '^relu_'
# a bare file name means the file in the current directory
cp "$PLUGIN" "$TMP/local_plugin.so"
cd "$TMP" && expect 0 "relu_256x256_forward_c" "$TKBENCH" list --load local_plugin.so --filter '^relu_'
cd - >/dev/null || exit 1
rm "$TMP/local_plugin.so"

# failures: exit 2, a clear message, no output file. libm is a shared object without
# tkb_plugin_init (and already in the process, so loading it changes nothing).
NOINIT=$(ldd "$TKBENCH" | awk '/libm\.so/ {print $3; exit}')
expect 2 'plugin "/nonexistent/x.so": no such file' "$TKBENCH" run --load /nonexistent/x.so --out "$TMP/none.json"
expect 2 "exports no function tkb_plugin_init" "$TKBENCH" run --load "$NOINIT" --out "$TMP/none.json"
expect 2 "exports no function tkb_plugin_init" "$TKBENCH" list --load "$NOINIT"
echo "not a shared object" > "$TMP/text.so"
expect 2 "could not be loaded" "$TKBENCH" run --load "$TMP/text.so" --out "$TMP/none.json"
expect 2 "is a directory" "$TKBENCH" run --load "$TMP" --out "$TMP/none.json"
expect 2 "--load needs a value" "$TKBENCH" run --load
[ ! -e "$TMP/none.json" ] && pass || fail "an output file was created after a usage error"
finish
