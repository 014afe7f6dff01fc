# readme.sh - every command of README.md's ```sh blocks, run as a user would type it, in
# a scratch directory, with `tkbench` being the built executable. A command that exits
# non-zero fails the test; so does one whose selection matches nothing (tkbench exits 2
# for that). A command that writes a file (--out FILE, > FILE) must leave it non-empty.
#
# Two changes keep the whole script to seconds (the default selection, 160 entries, takes
# ~20 s a command here, mostly the reference implementations), and each is printed with
# the command it changes:
#  - `run` gets --iterations 1 --experiments 1 appended (later flags win; one with a
#    --budget, which the fixed rule cannot take, gets --budget 2 --experiments 1), `ab`
#    --iterations 2 --experiments 1: the flags and the selection are what is tested here,
#    not the timings;
#  - `run` or `check` without a selection of its own (--filter, --tag, --op, --load,
#    --benchmark_filter=) gets --filter '^cpu_96x96x64_' (normalization's small spec, on
#    every device) appended. The default selection is README's `tkbench list --tag cpu`,
#    which runs as written.
# Commands that cannot run here are skipped by the rules in skip_reason, each printed with
# its reason.
. "$(dirname "$0")/lib.bash"

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
README="$ROOT/README.md"

# README's relative paths (examples/plugin.c, include/) as seen from the repository root
ln -s "$ROOT/include" "$TMP/include"
ln -s "$ROOT/examples" "$TMP/examples"
mkdir -p "$TMP/bin"
cat >"$TMP/bin/tkbench" <<'WRAPPER'
#!/usr/bin/env bash
# README's `tkbench`: the built executable, with readme.sh's two speed-ups
args=("$@")
extra=()
if [ "${1:-}" = run ] || [ "${1:-}" = check ] || [ "${1:-}" = ab ]; then
  own_selection=0 budget=0
  for a in "$@"; do
    case $a in --filter | --filter=* | --tag | --tag=* | --op | --op=* | --load | --load=* | --benchmark_filter=*)
      own_selection=1 ;;
    --budget | --budget=*) budget=1 ;;
    esac
  done
  [ "$own_selection" = 1 ] || extra+=(--filter '^cpu_96x96x64_')
  # a budget needs the ci rule, which --iterations would replace: a short budget instead
  [ "$1" = run ] && [ "$budget" = 1 ] && extra+=(--budget 2 --experiments 1)
  [ "$1" = run ] && [ "$budget" = 0 ] && extra+=(--iterations 1 --experiments 1)
  [ "$1" = ab ] && extra+=(--iterations 2 --experiments 1)
fi
[ ${#extra[@]} -eq 0 ] || echo "appended: ${extra[*]}" >>"$README_SH_LOG"
exec "$README_SH_TKBENCH" "${args[@]}" "${extra[@]}"
WRAPPER
chmod +x "$TMP/bin/tkbench"
export README_SH_TKBENCH="$TKBENCH" README_SH_LOG="$CAP/appended"

# The commands: the lines of ```sh blocks (indented ones too, as in a list item), without
# their comments (README's commands hold no quoted '#'), blank lines and lines that hold
# only a comment; a trailing backslash joins the next line.
readme_commands() {
  awk '
    /^[ \t]*```sh[ \t]*$/ { inside = 1; next }
    inside && /^[ \t]*```[ \t]*$/ { inside = 0; next }
    inside {
      line = $0
      sub(/^[ \t]+/, "", line)
      if (pending != "") { line = pending " " line; pending = "" }
      if (line ~ /\\$/) { sub(/\\$/, "", line); pending = line; next }
      sub(/[ \t]+#.*$/, "", line)
      if (line == "" || line ~ /^#/) next
      print line
    }' "$README"
}

# --method instructions counts under Valgrind here (no PMU on most machines), which cannot
# run a tkbench built with AddressSanitizer
CAN_COUNT=1
COUNT_WHY=""
if ldd "$TKBENCH" 2>/dev/null | grep -q libasan; then
  CAN_COUNT=0 COUNT_WHY="counts under Valgrind, which cannot run this AddressSanitizer build (the Release tree's cli_readme runs it)"
elif ! command -v valgrind >/dev/null; then
  CAN_COUNT=0 COUNT_WHY="counts under Valgrind, which is not installed here (scripts/bootstrap.sh installs it)"
fi

HAS_OPENCL=0
"$TKBENCH" info 2>/dev/null | grep -A1 '^  opencl:0 ' | grep -q 'methods:' && HAS_OPENCL=1

# skip_reason CMD: prints why CMD cannot run here, or nothing when it can.
skip_reason() {
  case $1 in
    *tkbench\ slurm\ *--dry-run*) ;; # needs neither Slurm nor the run's device
    *tkbench\ slurm\ *) echo "submits to a Slurm cluster; cli_slurm brings one up to submit to" ;;
    make\ *) echo "builds and tests the whole project; this test is one of what 'make test' runs" ;;
    *pkg-config*tkbench*) echo "builds against an installed tkbench: install_consumers (tests/install/consumers.sh) does" ;;
    *compare.py*) echo "Google Benchmark's tools/compare.py is not part of tkbench and not installed here" ;;
    *--device\ cuda:*) echo "no CUDA device here; the CUDA commands run on the emulator in cli_cuda_emu" ;;
    *--device\ opencl:*) [ "$HAS_OPENCL" = 1 ] || echo "no OpenCL device here; 'tkbench info' says why" ;;
    *--method\ instructions* | *-counts.json*) [ "$CAN_COUNT" = 1 ] || echo "$COUNT_WHY" ;;
  esac
}

# the file a command writes, if any: --out FILE or > FILE
written_file() {
  sed -nE 's/.*--out[ =]([^ ]+).*/\1/p; s/.*[^0-9>]>[ ]*([^ ]+).*/\1/p' <<<"$1" | head -n 1
}

cd "$TMP" || exit 1
n_run=0 n_skipped=0
while IFS= read -r cmd; do
  reason=$(skip_reason "$cmd")
  if [ -n "$reason" ]; then
    echo "SKIP: $cmd"
    echo "      because: $reason"
    n_skipped=$((n_skipped + 1))
    continue
  fi
  : >"$CAP/appended"
  t0=$(date +%s.%N)
  PATH="$TMP/bin:$PATH" bash -o pipefail -c "$cmd" >"$CAP/out" 2>"$CAP/err" </dev/null
  rc=$?
  secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  n_run=$((n_run + 1))
  echo "RUN:  $cmd  [${secs} s]"
  sed 's/^/      /' "$CAP/appended"
  if [ "$rc" -ne 0 ]; then
    fail "README command exited $rc: $cmd"
    tail -n 5 "$CAP/err" | sed 's/^/      stderr: /' >&2
    continue
  fi
  out=$(written_file "$cmd")
  if [ -n "$out" ] && [ ! -s "$out" ]; then
    fail "README command left no file $out: $cmd"
    continue
  fi
  pass
done < <(readme_commands)
echo "$n_run README commands run, $n_skipped skipped"
[ "$n_run" -gt 0 ] || fail "no command found in README.md's sh blocks"
finish
