# scripts.sh - the project's shell scripts parse (bash -n): gpu-check.sh runs only on a
# GPU machine, whose time is scarce, so a syntax error must show here first.
. "$(dirname "$0")/lib.bash"

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
for s in "$ROOT"/scripts/*.sh "$ROOT"/bench/run_all.sh "$ROOT"/.ci/run; do
  [ -f "$s" ] || continue
  if bash -n "$s" 2>"$CAP/err"; then pass; else fail "$s does not parse: $(cat "$CAP/err")"; fi
done
finish
