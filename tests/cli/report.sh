# report.sh - `tkbench report` and `run --out x.html`: the page is written whole or not
# at all, asks nothing of the network, and works in a real browser: headless Chromium
# loads it, a script run in the page checks one plot set per entry, every entry in the
# table and in the overview chart, sorting by a column both ways and filtering, and the
# machine's warnings folded into one line whose sentences open on a click; a screenshot
# is not blank. On a copy of a run's file with crafted warnings and a +-921% interval
# (nothing here depends on how fast the machine is): the warnings grouped, the wide row's
# status, the CPU-time column, the overview and the cpu-over-reference speed-up; with
# --base, the forest plot and both runs in every entry's plots. Bad input exits 2 naming
# the file and the problem, and writes nothing.
. "$(dirname "$0")/lib.bash"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SEL=(--filter '^cpu_96x96x64_(forward|vjp)_' --iterations 8 --experiments 2 --quiet)

"$TKBENCH" run "${SEL[@]}" --out "$TMP/r.json" 2>"$CAP/err" && pass || fail "run --out r.json: $(cat "$CAP/err")"
"$TKBENCH" run "${SEL[@]}" --seed 3 --out "$TMP/b.json" 2>"$CAP/err" && pass || fail "run --out b.json: $(cat "$CAP/err")"

# ---- the command ----
expect 0 "" "$TKBENCH" report "$TMP/r.json" -o "$TMP/r.html"
expect 0 "" "$TKBENCH" report "$TMP/r.json" --out="$TMP/r2.html" --title 'a <b> title' --copy-gbs 10 --sgemm-gflops 50
grep -q 'a &lt;b&gt; title' "$TMP/r2.html" && pass || fail "the title is not escaped"
grep -q '% of copy' "$TMP/r2.html" && grep -q '% of sgemm' "$TMP/r2.html" && pass || fail "no throughput against the given peaks"
# to stdout when it is not a terminal
"$TKBENCH" report "$TMP/r.json" >"$TMP/stdout.html" 2>"$CAP/err" && grep -q '</html>' "$TMP/stdout.html" && pass ||
  fail "report to stdout: $(cat "$CAP/err")"
# run writes the same page for its own results
expect 0 "" "$TKBENCH" run "${SEL[@]}" --out "$TMP/run.html"
grep -q '<section class="entry"' "$TMP/run.html" && pass || fail "run --out x.html wrote no entries"
# a Google Benchmark file (no tkbench object): one value per repetition
python3 - "$TMP/r.json" "$TMP/gb.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for b in d["benchmarks"]:
    b.pop("tkbench", None)
d["context"] = {k: d["context"][k] for k in ("date", "host_name", "num_cpus", "library_version")}
json.dump(d, open(sys.argv[2], "w"))
PY
expect 0 "" "$TKBENCH" report "$TMP/gb.json" -o "$TMP/gb.html"
grep -q 'repetitions in 1 experiment' "$TMP/gb.html" && pass || fail "a Google Benchmark file's entries are not drawn"

# against a base: a forest plot row and a table row per compared entry, the verdicts named
expect 0 "" "$TKBENCH" report "$TMP/r.json" --base "$TMP/b.json" --noise 5% -o "$TMP/cmp.html"
python3 - "$TMP/cmp.html" "$TMP/r.json" >"$CAP/cmp" 2>&1 <<'PY'
import json, re, sys
page = open(sys.argv[1]).read()
names = {b["run_name"] for b in json.load(open(sys.argv[2]))["benchmarks"]}
svg = re.search(r'<svg[^>]*aria-label="ratio new/base[^"]*">.*?</svg>', page, re.S)
forest = re.findall(r'<g class="(faster|slower|same|unsure)">', svg.group(0)) if svg else []
table = re.search(r'<table class="sortable" id="comparison">.*?</table>', page, re.S)
rows = [r.replace("<wbr>", "") for r in re.findall(r"<tr><td>(.*?)</td>", table.group(0))] if table else []
# each entry's two plots draw the base run and the new one, with a legend naming them
sections = re.findall(r'<section class="entry".*?</section>', page, re.S)
both = [x for x in sections if x.count('<g class="base">') == 4 and x.count('<g class="new">') == 4
        and x.count('<g class="legend">') == 2]
overview_first = svg is not None and page.index('id="s-overview"') < svg.start() < page.index('id="summary"')
ok = (len(forest) == len(names) and sorted(rows) == sorted(names) and "noise band +-5%" in page
      and len(both) == len(names) and overview_first)
print(f"{len(forest)} forest rows, table {rows}, {len(names)} entries, {len(both)} with both runs plotted, "
      f"forest in the overview: {overview_first}")
sys.exit(0 if ok else 1)
PY
[ $? -eq 0 ] && pass || fail "report --base: $(cat "$CAP/cmp")"

# ---- the first screen, the summary's status and the overview, on a crafted copy ----
# the machine's three warnings in the context and the load's with every entry; the first
# entry's interval +-921% (its rule, fixed, "converges" whatever the calls say)
python3 - "$TMP/r.json" "$TMP/w.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["context"]["warnings"] = [
    "the load average (9.00) exceeds the 2 online cores: other work competes for them",
    "cpu frequency scaling is on (governor powersave): the clock rate follows the load",
    "the cpu ops run 4 OpenMP threads, but only 1 core is free"]
d["context"]["warning_kinds"] = ["load", "frequency", "threads"]
first = d["benchmarks"][0]["run_name"]
for b in d["benchmarks"]:
    tk = b.get("tkbench")
    if not tk:
        continue
    if b["run_name"] == first:
        st = tk["statistics"]
        st["median_ci_low_ms"], st["median_ci_high_ms"] = st["median_ms"] * 0.5, st["median_ms"] * 10.21
        st["converged"] = True
    tk["warnings"] = tk.get("warnings", []) + ["the load average (9.00) exceeds the 2 online cores"]
    tk["warning_kinds"] = tk.get("warning_kinds", []) + ["load"]
json.dump(d, open(sys.argv[2], "w"))
PY
expect 0 "" "$TKBENCH" report "$TMP/w.json" -o "$TMP/w.html"
python3 - "$TMP/w.html" "$TMP/w.json" >"$CAP/w" 2>&1 <<'PY'
import json, re, sys
page = open(sys.argv[1]).read()
d = json.load(open(sys.argv[2]))
names = list(dict.fromkeys(b["run_name"] for b in d["benchmarks"]))
errors = []
def want(cond, what):
    if not cond:
        errors.append(what)
want(page.count('<details class="machine">') == 1, "the machine's warnings are not one <details>")
want("<b>3 machine warnings</b>: load above the cores, frequency scaling, more OpenMP threads than free cores" in page,
     "no grouped line naming the three warnings")
want(f"during {len(names)} of {len(names)} entries" in page, "the entries' load warning is not said once")
sections = re.findall(r'<section class="entry".*?</section>', page, re.S)
want(not any("load average" in x for x in sections), "an entry's section repeats the machine's warning")
want(page.index('<details class="machine">') < page.index('id="s-overview"') < page.index('id="summary"'),
     "the warnings line, the overview and the summary are not in that order")
want(">CPU time</th>" in page, "no CPU-time column")
row = re.search(r'<tr><td><a href="#e0">.*?</tr>', page, re.S)
row = row.group(0) if row else ""
want("wide (±921%)" in row and ">ok<" not in row, f"the +-921% row's status: {row[-200:]}")
want(re.search(r'</td><td data-v="[0-9.e+-]+">[0-9.]+ [num]?s</td><td>', row), "the first row has no CPU time")
want(f'aria-label="median times of {len(names)} entries with their 95% intervals"' in page,
     "no overview chart of every entry")
tk = {b["run_name"]: b["tkbench"] for b in d["benchmarks"] if b.get("tkbench")}
key = lambda t: (t.get("op"), t.get("spec"), t.get("mode"))
refs = {key(t) for t in tk.values() if t.get("impl") == "reference"}
pairs = sum(1 for t in tk.values() if t.get("impl") == "cpu" and key(t) in refs)
want(pairs > 0 and f"speed-up of cpu over reference for {pairs} entr" in page and 'id="speedup"' in page,
     f"no speed-up chart of the {pairs} cpu entries over their references")
print("\n".join(errors) or "ok")
sys.exit(1 if errors else 0)
PY
[ $? -eq 0 ] && pass || fail "the crafted page: $(cat "$CAP/w")"

# nothing on the page asks the network for anything
for f in r.html r2.html run.html gb.html cmp.html w.html; do
  if grep -Eq '(src|href)="https?:' "$TMP/$f" || grep -Eqi '@import|url\(' "$TMP/$f"; then fail "$f refers to an external URL"; else pass; fi
done

# ---- bad input: exit 2, the file and the problem named, nothing written ----
printf '{"benchmarks": [1, 2' >"$TMP/trunc.json"
printf 'not json\n' >"$TMP/text.json"
printf '{"context": {}}' >"$TMP/nobench.json"
expect 2 "cannot read \"$TMP/missing.json\": No such file" "$TKBENCH" report "$TMP/missing.json" -o "$TMP/bad.html"
expect 2 "trunc.json\" ends early at line 1" "$TKBENCH" report "$TMP/trunc.json" -o "$TMP/bad.html"
expect 2 "text.json\" is not JSON: unexpected 'n' at line 1, column 1" "$TKBENCH" report "$TMP/text.json" -o "$TMP/bad.html"
expect 2 "has no \"benchmarks\" array" "$TKBENCH" report "$TMP/nobench.json" -o "$TMP/bad.html"
expect 2 "--base: " "$TKBENCH" report "$TMP/r.json" --base "$TMP/missing.json" -o "$TMP/bad.html"
expect 2 "needs a result file" "$TKBENCH" report -o "$TMP/bad.html"
expect 2 "takes one result file; '$TMP/b.json' is a second" "$TKBENCH" report "$TMP/r.json" "$TMP/b.json" -o "$TMP/bad.html"
expect 2 "--copy-gbs '-1' is not a number >= 0" "$TKBENCH" report "$TMP/r.json" --copy-gbs -1 -o "$TMP/bad.html"
expect 2 "--out:" "$TKBENCH" report "$TMP/r.json" -o "$TMP/no/such/dir/x.html"
[ ! -e "$TMP/bad.html" ] && pass || fail "a failed report left bad.html behind"
ls -a "$TMP" | grep -q '\.tmp\.' && fail "a temporary file was left behind" || pass

# ---- in a real browser ----
need_browser

# A script run in the page after its own: counts plots, reads the table, sorts by the
# median both ways, filters, and leaves what it saw in <body data-test>.
python3 - "$TMP/w.html" "$TMP/probe.html" <<'PY'
import sys
page = open(sys.argv[1]).read()
probe = r"""<script>(function(){
var out={}, secs=document.querySelectorAll('section.entry'), t=document.getElementById('summary');
var m=document.querySelector('details.machine');
out.machine=m?[m.open, m.getBoundingClientRect().height]:null;
if(m){m.open=true; out.machine.push(m.getBoundingClientRect().height);}
var ov=document.querySelector('svg[aria-label^="median times"]');
out.overview=ov?ov.querySelectorAll('g.fn text').length:0;
out.sections=[].map.call(secs,function(s){return [s.querySelector('h3').textContent, s.querySelectorAll('svg').length]});
out.rows=[].map.call(t.tBodies[0].rows,function(r){return r.cells[0].textContent});
var ths=t.tHead.rows[0].cells, med=-1;
for(var i=0;i<ths.length;i++) if(ths[i].textContent==='Median') med=i;
function col(){return [].map.call(t.tBodies[0].rows,function(r){return r.cells[med].getAttribute('data-v')})}
out.before=col(); ths[med].click(); out.asc=col(); out.asc_mark=ths[med].getAttribute('aria-sort');
ths[med].click(); out.desc=col(); out.desc_mark=ths[med].getAttribute('aria-sort');
var it=-1; for(var j=0;j<ths.length;j++) if(ths[j].textContent==='Items/s') it=j;
ths[it].click(); out.items=[].map.call(t.tBodies[0].rows,function(r){return r.cells[it].textContent});
var inp=document.getElementById('filter'); out.filter=!!inp;
if(inp){inp.value='_vjp_cpu$'; inp.dispatchEvent(new Event('input'));}
out.visible=[].filter.call(t.tBodies[0].rows,function(r){return !r.hidden}).map(function(r){return r.cells[0].textContent});
out.visible_sections=[].filter.call(secs,function(s){return !s.hidden}).length;
document.body.setAttribute('data-test', JSON.stringify(out));
})();</script>"""
open(sys.argv[2], "w").write(page.replace("</body>", probe + "</body>"))
PY
browser_dom "file://$TMP/probe.html" "$TMP/dom.html"
python3 - "$TMP/dom.html" "$TMP/w.json" >"$CAP/dom" 2>&1 <<'PY'
import html.parser, json, re, sys
class Body(html.parser.HTMLParser):
    data = None
    def handle_starttag(self, tag, attrs):
        if tag == "body":
            self.data = dict(attrs).get("data-test")
p = Body()
p.feed(open(sys.argv[1]).read())
if not p.data:
    sys.exit("the page's probe did not run (no data-test on <body>)")
t = json.loads(p.data)
names = []
for b in json.load(open(sys.argv[2]))["benchmarks"]:
    if b.get("run_type") == "iteration" and b["run_name"] not in names:
        names.append(b["run_name"])
errors = []
if [s[0] for s in t["sections"]] != names: errors.append(f"sections {t['sections']} != entries {names}")
if any(n < 2 for _, n in t["sections"]): errors.append(f"an entry without its two plots: {t['sections']}")
# the warnings' sentences: hidden until the line is clicked
if not t["machine"] or t["machine"][0] or not t["machine"][1] < t["machine"][2] / 2:
    errors.append(f"the machine's warnings do not open on demand: [open, its height closed, open] = {t['machine']}")
if t["overview"] != len(names): errors.append(f"the overview names {t['overview']} entries, not {len(names)}")
if t["rows"] != names: errors.append(f"table rows {t['rows']} != entries {names}")
num = lambda col: [float(v) for v in col if v not in (None, "")]
if sorted(num(t["before"])) != num(t["asc"]) or t["asc_mark"] != "ascending": errors.append(f"ascending sort: {t['asc']}")
if sorted(num(t["before"]), reverse=True) != num(t["desc"]) or t["desc_mark"] != "descending": errors.append(f"descending sort: {t['desc']}")
if len(set(num(t["asc"]))) < 2: errors.append("the sort test needs two different medians")
# a column without data-v sorts by its text read with its SI prefix ("225.5 k" < "1.2 M")
si = {"": 1, "k": 1e3, "M": 1e6, "G": 1e9}
items = [float(v.split()[0]) * si[(v.split() + [""])[1]] for v in t["items"] if v != "-"]
if items != sorted(items) or len(set(items)) < 2: errors.append(f"sorting by Items/s: {t['items']}")
want = [n for n in names if re.search("_vjp_cpu$", n)]
if not t["filter"] or sorted(t["visible"]) != sorted(want) or t["visible_sections"] != len(want):
    errors.append(f"filter: {t['visible']} ({t['visible_sections']} sections) != {want}")
print("\n".join(errors) or "ok")
sys.exit(1 if errors else 0)
PY
[ $? -eq 0 ] && pass || fail "in the browser: $(cat "$CAP/dom") $(tail -3 "$CAP/chromium")"

# A link with #filter=REGEX opens the page filtered.
browser_dom "file://$TMP/r.html#filter=_forward_reference%24" "$TMP/dom2.html"
shown=$(grep -o '<tr[^>]*><td><a href="#e[0-9]*">[^/]*' "$TMP/dom2.html" | grep -v 'hidden' | sed 's/.*">//; s/<wbr>//g; s/<$//')
[ "$shown" = cpu_96x96x64_forward_reference ] && pass || fail "#filter= in the URL: rows shown: $shown"

# The screenshot is a page, not a blank: many non-white pixels and many colours.
if bash "$ROOT/scripts/screenshot.sh" "$TMP/r.html" "$TMP/r.png" 900,1100 2>"$CAP/err"; then
  python3 "$ROOT/tests/cli/png_not_blank.py" "$TMP/r.png" >"$CAP/png" 2>&1
  [ $? -eq 0 ] && pass || fail "the screenshot looks blank: $(cat "$CAP/png")"
else
  fail "screenshot: $(cat "$CAP/err")"
fi
finish
