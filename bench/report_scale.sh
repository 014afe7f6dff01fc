#!/usr/bin/env bash
# report_scale.sh [BUILD_DIR] [SEED.json] - the HTML report at scale:
#  - size: the page of 3000 entries (target under 10 MB) and how long `tkbench report`
#    takes to write it;
#  - render: how long Chromium takes to load and lay out the page of the whole default
#    suite (as many entries as `tkbench run` selects by default; target under 2 s),
#    against a baseline measured in the same run: Chromium on a one-line page.
#
# The entries are a real run's (SEED.json; by default the cpu impls' cpu-tagged forward
# entries, 20 calls in 3 experiments) repeated under new names: real distributions at the
# size of a real suite. Render time is read inside the page (a script after the page's
# own forces layout and reads performance.now(), so browser start-up is not counted) and,
# as a cross-check, as the wall time of a headless screenshot minus the baseline's.
set -euo pipefail
build=$(realpath "${1:-build}") seed=${2:+$(realpath "$2")}
cd "$(dirname "$0")/.."
tmp=$(mktemp -d /tmp/tkb_report_scale_XXXXXX)
trap 'rm -rf "$tmp"' EXIT
calc() { awk "BEGIN { printf \"%.${2:-2}f\", $1 }"; }
default_n=$("$build/tkbench" run --benchmark_list_tests | wc -l)
echo "# report at scale  load $(cut -d' ' -f1-3 /proc/loadavg)"

if [ -z "$seed" ]; then
  seed=$tmp/seed.json
  "$build/tkbench" run --tag cpu --mode forward --impl cpu --iterations 20 --experiments 3 --quiet --out "$seed"
fi
# replicate SEED's entries under new names into a file of N entries
replicate() {
  python3 - "$seed" "$2" "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
groups = {}
for r in d["benchmarks"]:
    groups.setdefault(r["run_name"], []).append(r)
names, out, n = list(groups), [], int(sys.argv[3])
for i in range(n):
    base = names[i % len(names)]
    name = base if i < len(names) else f"{base}_copy{i // len(names)}"
    for r in groups[base]:
        r = dict(r, run_name=name, name=name + r["name"][len(base):], family_index=i)
        out.append(r)
d["benchmarks"] = out
json.dump(d, open(sys.argv[2], "w"))
PY
}

replicate 3000 "$tmp/big.json"
t0=$(date +%s%N)
"$build/tkbench" report "$tmp/big.json" -o "$tmp/big.html"
t1=$(date +%s%N)
bytes=$(stat -c %s "$tmp/big.html")
echo "size      $(calc "$bytes / 1e6") MB for 3000 entries ($(calc "$bytes / 3000 / 1e3" 1) KB each; the JSON: $(calc "$(stat -c %s "$tmp/big.json") / 1e6") MB)   target < 10 MB"
echo "write     $(calc "($t1 - $t0) / 1e9") s (tkbench report, 3000 entries)"

browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "render    not measured: chromium is not installed (scripts/bootstrap.sh test installs it)"
  exit 0
fi
replicate "$default_n" "$tmp/suite.json"
"$build/tkbench" report "$tmp/suite.json" -o "$tmp/suite.html"
probe='<script>document.body.offsetHeight;document.body.setAttribute("data-ms",String(performance.now()))</script>'
sed "s|</body>|$probe</body>|" "$tmp/suite.html" >"$tmp/probe.html"
echo "<!DOCTYPE html><html><body><p>baseline</p>$probe</body></html>" >"$tmp/empty.html"
in_page_ms() {
  local profile
  profile=$(mktemp -d /tmp/tkb_chromium_XXXXXX)
  "$browser" --headless --no-sandbox --disable-gpu --user-data-dir="$profile" --dump-dom "file://$1" 2>/dev/null |
    grep -o 'data-ms="[0-9.]*"' | grep -o '[0-9.]*' || echo nan
  rm -rf "$profile"
}
shot_ns() {
  local a
  a=$(date +%s%N)
  bash scripts/screenshot.sh "$1" "$tmp/shot.png" 1280,1600
  echo $(($(date +%s%N) - a))
}
pages=() bases=() shots=() shot_bases=()
for _ in 1 2 3 4 5; do
  pages+=("$(in_page_ms "$tmp/probe.html")") bases+=("$(in_page_ms "$tmp/empty.html")")
  shots+=("$(shot_ns "$tmp/suite.html")") shot_bases+=("$(shot_ns "$tmp/empty.html")")
done
median() { printf '%s\n' "$@" | sort -g | sed -n "$((($# + 1) / 2))p"; }
p=$(median "${pages[@]}") b=$(median "${bases[@]}") s=$(median "${shots[@]}") sb=$(median "${shot_bases[@]}")
echo "render    $(calc "$p / 1e3") s to load and lay out the default suite's $default_n entries ($(calc "$(stat -c %s "$tmp/suite.html") / 1e6") MB) in Chromium, median of 5 (a one-line page: $(calc "$b / 1e3" 3) s)   target < 2 s"
echo "screenshot $(calc "$s / 1e9") s wall for that page, $(calc "$sb / 1e9") s for a one-line page: $(calc "($s - $sb) / 1e9") s more"
echo "load after $(cut -d' ' -f1-3 /proc/loadavg)"
