# completion.sh - tools/tkbench-completion.bash, as bash calls it on TAB: COMP_WORDS split
# the way readline splits a line ('=' and ':' are words of their own), the replies in
# COMPREPLY. The commands, flags, a flag's choices, entry names (a --load plugin's too),
# ops, devices and files.
. "$(dirname "$0")/lib.bash"
set +u # bash's completion variables
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tools/tkbench-completion.bash"

# complete LINE: the replies for the end of LINE, space-separated
complete_line() {
  local line=$1
  read -ra COMP_WORDS < <(sed -E 's/([=:])/ \1 /g' <<<"$line")
  [[ $line == *" " || $line == *[=:] ]] && COMP_WORDS+=("")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMPREPLY=()
  _tkbench
  echo "${COMPREPLY[*]}"
}
# want LINE REPLIES: the replies are exactly REPLIES (in any order)
want() {
  local got
  got=$(complete_line "$TKBENCH $1" | tr ' ' '\n' | grep -v '^$' | sort | tr '\n' ' ')
  local exp
  exp=$(tr ' ' '\n' <<<"$2" | grep -v '^$' | sort | tr '\n' ' ')
  [ "$got" = "$exp" ] && pass || fail "'tkbench $1' completes to '$got', want '$exp'"
}
# has LINE REPLY: REPLY is one of the replies
has() {
  complete_line "$TKBENCH $1" | tr ' ' '\n' | grep -qx -- "$2" && pass || fail "'tkbench $1' does not offer '$2'"
}

want "" "list run check compare ab report history merge slurm info help version -h --help --version"
want "r" "run report"
want "ru" "run"
want "help " "list run check compare ab report history merge slurm info help version"
want "run --fo" "--format"
want "run --format " "console json csv markdown html"
want "run --benchmark_out_f" "--benchmark_out_format="
want "run --benchmark_out_format=" "console json csv markdown html"
want "run --benchmark_out_format=cs" "csv"
want "--benchmark_rep" "--benchmark_repetitions= --benchmark_report_aggregates_only"
want "run --mode forward_" "forward_res forward_and_vjp"
want "list --op norm" "normalization"
want "run --impl ref" "reference"
has "run --device " "cpu"
has "run --method " "wallclock"
has "list --tag " "primary"
want "run --filter cpu_96x96x64_forward_cp" "cpu_96x96x64_forward_cpu"
want "check --filter cpu_96x96x64_forward_res_r" "cpu_96x96x64_forward_res_reference"
want "list --filter relu_256x256_forward_c" ""
want "list --load $PLUGIN --filter relu_256x256_forward_" "relu_256x256_forward_c relu_256x256_forward_and_vjp_c"
want "info --" "--check --help --peaks"
# a command's subcommands, from its usage line; then its flags, and files where it takes them
want "history " "list show export prune regressions import"
want "history sh" "show"
want "history --history h.sqlite ex" "export"
has "history show --f" "--filter"
touch "$TMP/old_run.json"
want "history import $TMP/old_r" "$TMP/old_run.json"
want "history show x" ""
want "version --" "--help"
touch "$TMP/results_a.json"
want "run --out $TMP/results_" "$TMP/results_a.json"
if "$TKBENCH" info 2>/dev/null | grep -A1 '^  opencl:0 ' | grep -q 'methods:'; then
  want "run --device opencl:" "0" # readline replaces the word after ':'
fi
finish
