#!/usr/bin/env bash
# complexity.sh - the complexity gate: no function under src/ has a cyclomatic
# complexity over LIMIT (default 40), as curl's CI holds its sources to. A function over
# it is a function a reader cannot hold in mind: split it into named steps.
# Measured with pmccabe (Debian's; scripts/bootstrap.sh test installs it), else lizard
# (PyPI); both count every if, loop, case, && and || as a path. Exit 77 (skipped) when
# neither is installed.
#
#   bash tests/source/complexity.sh [SOURCE_DIR] [LIMIT]
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
limit=${2:-40}
cd "$root"
mapfile -t files < <(find src -name '*.c' | sort)

if command -v pmccabe >/dev/null 2>&1; then
  # columns: modified McCabe, traditional McCabe (each case counted), statements,
  # first line, lines, file(line): function
  over=$(pmccabe "${files[@]}" | awk -v limit="$limit" '$2 > limit { print $6 " " $7 ": complexity " $2 ", " $5 " lines" }')
  tool=pmccabe
elif command -v lizard >/dev/null 2>&1; then
  # (lizard exits 1 when it warns)
  over=$({ lizard -C "$limit" -w "${files[@]}" || true; } |
         sed -n 's/: warning: \(.*\) has .* \([0-9]*\) CCN, .* \([0-9]*\) length.*/: \1: complexity \2, \3 lines/p')
  tool=lizard
else
  echo "SKIPPED: neither pmccabe nor lizard is installed (scripts/bootstrap.sh test installs pmccabe; or pip install lizard)"
  exit 77
fi

if [ -n "$over" ]; then
  echo "$over"
  echo "FAIL: $(wc -l <<<"$over") function(s) in src/ over complexity $limit ($tool): split them into named steps"
  exit 1
fi
echo "ok: ${#files[@]} files, no function in src/ over complexity $limit ($tool)"
