# report_history.sh - `tkbench report --history DB`: the history page of a results store.
# The store is built with `history import` from Google Benchmark files made here, whose
# truth is known: on machine lab-a one entry steps +10% at run 12 while five stay put (the
# code's step), on lab-b four entries step +10% together at run 16 (the machine's), and an
# entry and a branch whose names hold HTML. The page is written whole or not at all, asks
# nothing of the network, escapes what the store holds, and follows the selection flags;
# bad input exits 2 and writes nothing. Then headless Chromium loads it, and a script run
# in the page (report.sh's probe) checks one plot per entry with its change points drawn
# and listed with their commits, the change points' table against `history regressions`,
# sorting it both ways, the machines' legend and the name filter; the screenshot is not
# blank.
. "$(dirname "$0")/lib.bash"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DB=$TMP/store.sqlite

python3 - "$TMP" <<'PY'
import json, random, sys
random.seed(7)
HOSTILE = "BM_<script>alert(1)</script>"
def doc(day, rows):
    return {"context": {"date": f"2025-{1 + day // 28:02d}-{1 + day % 28:02d}T06:00:00+00:00", "host_name": "lab",
                        "num_cpus": 8, "library_version": "v1.7.1"}, "benchmarks": rows}
def rows(name, level):
    return [{"name": name, "run_name": name, "run_type": "iteration", "repetitions": 5, "repetition_index": k,
             "threads": 1, "iterations": 1000, "real_time": level * random.lognormvariate(0, 0.003),
             "cpu_time": level, "time_unit": "ns"} for k in range(5)]
for r in range(24):
    a = []
    for i in range(5):
        a += rows(f"BM_steady/{i + 1}", 1000 * (i + 1) * random.lognormvariate(0, 0.004))
    a += rows("BM_code_step", 20000 * (1.10 if r >= 12 else 1) * random.lognormvariate(0, 0.004))
    a += rows(HOSTILE, 500 * random.lognormvariate(0, 0.004))
    json.dump(doc(r, a), open(f"{sys.argv[1]}/a{r:02d}.json", "w"))
    b = []
    for i in range(4):
        b += rows(f"BM_shared/{i + 1}", 3000 * (i + 1) * (1.10 if r >= 16 else 1) * random.lognormvariate(0, 0.004))
    json.dump(doc(r, b), open(f"{sys.argv[1]}/b{r:02d}.json", "w"))
PY
for r in $(seq 0 23); do
  f=$(printf '%02d' "$r")
  for m in a b; do
    branch=main
    [ "$m$r" = a11 ] && branch='<b>bold</b>'
    "$TKBENCH" history import --history "$DB" --machine "lab-$m" --commit "$(printf 'abcdef%02x' "$r")" \
      --branch "$branch" --quiet "$TMP/$m$f.json" 2>"$CAP/err" || fail "history import $m$f: $(cat "$CAP/err")"
  done
done

# ---- what the store holds: the code's step on lab-a, the machine's on lab-b ----
expect 0 "" "$TKBENCH" history regressions --history "$DB" --format json --out "$TMP/r.json"
json_check "$TMP/r.json" '[(c["name"], c["cause"], c["last_run_before"]["commit"], c["last_run_before"]["branch"], c["first_run_after"]["commit"]) for c in d["change_points"] if c["machine"] == "lab-a"] == [("BM_code_step", "code", "abcdef0b", "<b>bold</b>", "abcdef0c")]'
json_check "$TMP/r.json" 'sorted(c["name"] for c in d["change_points"] if c["machine"] == "lab-b" and c["cause"] == "machine" and c["first_run_after"]["commit"] == "abcdef10") == ["BM_shared/1", "BM_shared/2", "BM_shared/3", "BM_shared/4"]'

# ---- the page ----
expect 0 "" "$TKBENCH" report --history "$DB" -o "$TMP/h.html"
grep -q '</html>' "$TMP/h.html" && pass || fail "the page is not whole"
if grep -Eq '(src|href)="https?:' "$TMP/h.html" || grep -Eqi '@import|url\(' "$TMP/h.html"; then fail "the page refers to an external URL"; else pass; fi
if grep -q '<script>alert(1)' "$TMP/h.html" || grep -q '<b>bold' "$TMP/h.html"; then fail "raw HTML from the store reached the page"; else pass; fi
grep -q 'BM_&lt;script&gt;alert(1)&lt;/script&gt;' "$TMP/h.html" && grep -q '&lt;b&gt;bold&lt;/b&gt;' "$TMP/h.html" && pass ||
  fail "the hostile entry or branch is not on the page, escaped"
# the selection flags: one machine, one entry
expect 0 "" "$TKBENCH" report --history "$DB" --machine lab-b --title 'only <lab-b>' -o "$TMP/b.html"
[ "$(grep -c '<section class="entry"' "$TMP/b.html")" = 4 ] && grep -q 'only &lt;lab-b&gt;' "$TMP/b.html" && pass ||
  fail "--machine lab-b: $(grep -c '<section class="entry"' "$TMP/b.html") sections"
expect 0 "" "$TKBENCH" report --history "$DB" --filter '^BM_code_step$' --since 2025-01-05 --last 20 -o "$TMP/one.html"
[ "$(grep -c '<section class="entry"' "$TMP/one.html")" = 1 ] && grep -q 'code: 1 of 7 entries stepped up there' "$TMP/one.html" && pass ||
  fail "--filter: the section or its cause (judged by all of lab-a's entries): $(grep -o 'code: [^<]*' "$TMP/one.html" | head -1)"
"$TKBENCH" report --history "$DB" --machine lab-a >"$TMP/stdout.html" 2>"$CAP/err" && grep -q '</html>' "$TMP/stdout.html" && pass ||
  fail "report --history to stdout: $(cat "$CAP/err")"

# ---- bad input: exit 2, nothing written ----
bad=$TMP/bad.html
expect 2 "--history: " "$TKBENCH" report --history "$TMP/missing.sqlite" -o "$bad"
expect 2 "--filter" "$TKBENCH" report "$TMP/a00.json" --filter x -o "$bad"
expect 2 "--machine choose what a history page shows: they need --history DB" "$TKBENCH" report "$TMP/a00.json" --machine lab-a -o "$bad"
expect 2 "the result file $TMP/a00.json is for a result file's report" "$TKBENCH" report "$TMP/a00.json" --history "$DB" -o "$bad"
expect 2 "--base is for a result file's report" "$TKBENCH" report --history "$DB" --base "$TMP/a00.json" -o "$bad"
expect 2 "--machine: " "$TKBENCH" report --history "$DB" --machine nowhere -o "$bad"
expect 2 "has a point to draw" "$TKBENCH" report --history "$DB" --filter '^no_such_entry$' -o "$bad"
expect 2 "--since" "$TKBENCH" report --history "$DB" --since yesterday -o "$bad"
expect 2 "--out:" "$TKBENCH" report --history "$DB" -o "$TMP/no/such/dir/h.html"
[ ! -e "$bad" ] && pass || fail "a refused report left bad.html behind"
ls -a "$TMP" | grep -q '\.tmp\.' && fail "a temporary file was left behind" || pass

# ---- in a real browser ----
need_browser

python3 - "$TMP/h.html" "$TMP/probe.html" <<'PY'
import sys
page = open(sys.argv[1]).read()
probe = r"""<script>(function(){
var out={};
var secs=document.querySelectorAll('section.entry');
out.sections=[].map.call(secs,function(s){return {name:s.querySelector('h3').textContent,
  svgs:s.querySelectorAll('svg').length, marks:s.querySelectorAll('g.cp').length,
  listed:s.querySelectorAll('ul.steps li').length, dots:s.querySelectorAll('path.hd').length,
  tips:[].map.call(s.querySelectorAll('g.cp title'),function(t){return t.textContent})}});
out.legend=[].map.call(document.querySelectorAll('ul.machines li code'),function(c){return c.textContent});
var t=document.getElementById('regressions');
out.regressions=[].map.call(t.tBodies[0].rows,function(r){return [r.cells[1].textContent,r.cells[2].textContent,
  r.cells[1].querySelector('a').getAttribute('href')]});
var ths=t.tHead.rows[0].cells, ch=-1;
for(var i=0;i<ths.length;i++) if(ths[i].textContent==='Change') ch=i;
function col(){return [].map.call(t.tBodies[0].rows,function(r){return r.cells[ch].getAttribute('data-v')})}
ths[ch].click(); out.asc=col(); out.asc_mark=ths[ch].getAttribute('aria-sort');
ths[ch].click(); out.desc=col(); out.desc_mark=ths[ch].getAttribute('aria-sort');
var s=document.getElementById('summary');
out.rows=[].map.call(s.tBodies[0].rows,function(r){return r.cells[0].textContent});
var inp=document.getElementById('filter'); out.filter=!!inp;
if(inp){inp.value='^BM_shared/'; inp.dispatchEvent(new Event('input'));}
out.visible=[].filter.call(secs,function(x){return !x.hidden}).map(function(x){return x.querySelector('h3').textContent});
document.body.setAttribute('data-test', JSON.stringify(out));
})();</script>"""
open(sys.argv[2], "w").write(page.replace("</body>", probe + "</body>"))
PY
browser_dom "file://$TMP/probe.html" "$TMP/dom.html"
python3 - "$TMP/dom.html" "$TMP/r.json" >"$CAP/dom" 2>&1 <<'PY'
import html.parser, json, sys
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
cps = json.load(open(sys.argv[2]))["change_points"]
names = sorted({f"BM_steady/{i}" for i in range(1, 6)} | {f"BM_shared/{i}" for i in range(1, 5)} |
               {"BM_code_step", "BM_<script>alert(1)</script>"})
errors = []
got = [s["name"] for s in t["sections"]]
if got != names: errors.append(f"sections {got} != entries {names}")
if t["rows"] != names: errors.append(f"summary rows {t['rows']} != {names}")
for s in t["sections"]:
    steps = [c for c in cps if c["name"] == s["name"]]
    if s["svgs"] != 1 or s["dots"] < 1: errors.append(f"{s['name']}: {s['svgs']} plots, {s['dots']} lines of dots")
    if s["marks"] != len(steps) or s["listed"] != len(steps):
        errors.append(f"{s['name']}: {s['marks']} marks and {s['listed']} listed for {len(steps)} change points")
    for c in steps:
        if not any(c["last_run_before"]["commit"][:10] in tip and c["first_run_after"]["commit"][:10] in tip
                   for tip in s["tips"]):
            errors.append(f"{s['name']}: no mark names the commits of {c['first_run_after']['commit']}: {s['tips']}")
if sorted((r[0], r[1]) for r in t["regressions"]) != sorted((c["name"], c["machine"]) for c in cps):
    errors.append(f"change points' table {t['regressions']} != history regressions' {[(c['name'], c['machine']) for c in cps]}")
for r in t["regressions"]:
    k = int(r[2][2:])
    if names[k] != r[0]: errors.append(f"{r[0]} links to section {k} ({names[k]})")
num = lambda col: [float(v) for v in col]
if num(t["asc"]) != sorted(num(t["asc"])) or t["asc_mark"] != "ascending": errors.append(f"ascending: {t['asc']}")
if num(t["desc"]) != sorted(num(t["desc"]), reverse=True) or t["desc_mark"] != "descending": errors.append(f"descending: {t['desc']}")
if t["legend"] != ["lab-a", "lab-b"]: errors.append(f"legend {t['legend']}")
want = [n for n in names if n.startswith("BM_shared/")]
if not t["filter"] or t["visible"] != want: errors.append(f"filter: {t['visible']} != {want}")
print("\n".join(errors) or "ok")
sys.exit(1 if errors else 0)
PY
[ $? -eq 0 ] && pass || fail "in the browser: $(cat "$CAP/dom") $(tail -3 "$CAP/chromium")"

if bash "$ROOT/scripts/screenshot.sh" "$TMP/h.html" "$TMP/h.png" 1000,1400 2>"$CAP/err"; then
  python3 "$ROOT/tests/cli/png_not_blank.py" "$TMP/h.png" >"$CAP/png" 2>&1 && pass || fail "the screenshot looks blank: $(cat "$CAP/png")"
else
  fail "screenshot: $(cat "$CAP/err")"
fi
finish
