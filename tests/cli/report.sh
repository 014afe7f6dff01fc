# report.sh - `tkbench report` and `run --out x.html`: the page is written whole or not
# at all, asks nothing of the network, and works in a real browser: headless Chromium
# loads it, a script run in the page checks one plot set per entry, every entry in the
# table, sorting by a column both ways and filtering; a screenshot is not blank. Bad
# input exits 2 naming the file and the problem, and writes nothing.
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
forest = re.findall(r'<g class="(faster|slower|same|unsure)">', page)
table = re.search(r'<table class="sortable" id="comparison">.*?</table>', page, re.S)
rows = [r.replace("<wbr>", "") for r in re.findall(r"<tr><td>(.*?)</td>", table.group(0))] if table else []
ok = len(forest) == len(names) and sorted(rows) == sorted(names) and "noise band +-5%" in page
print(f"{len(forest)} forest rows, table {rows}, {len(names)} entries")
sys.exit(0 if ok else 1)
PY
[ $? -eq 0 ] && pass || fail "report --base: $(cat "$CAP/cmp")"

# nothing on the page asks the network for anything
for f in r.html r2.html run.html gb.html cmp.html; do
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
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ] && [ "$(id -u)" -eq 0 ]; then bash "$ROOT/scripts/bootstrap.sh" test >/dev/null 2>&1 || true; fi
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "SKIPPED: chromium is not installed and cannot be installed here (scripts/bootstrap.sh test, as root)"
  finish
  exit 77
fi

# A script run in the page after its own: counts plots, reads the table, sorts by the
# median both ways, filters, and leaves what it saw in <body data-test>.
python3 - "$TMP/r.html" "$TMP/probe.html" <<'PY'
import sys
page = open(sys.argv[1]).read()
probe = r"""<script>(function(){
var out={}, secs=document.querySelectorAll('section.entry'), t=document.getElementById('summary');
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
profile=$(mktemp -d /tmp/tkb_chromium_XXXXXX)
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --user-data-dir="$profile" \
  --dump-dom "file://$TMP/probe.html" >"$TMP/dom.html" 2>"$CAP/chromium"
rm -rf "$profile"
python3 - "$TMP/dom.html" "$TMP/r.json" >"$CAP/dom" 2>&1 <<'PY'
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
profile=$(mktemp -d /tmp/tkb_chromium_XXXXXX)
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --user-data-dir="$profile" \
  --dump-dom "file://$TMP/r.html#filter=_forward_reference%24" >"$TMP/dom2.html" 2>/dev/null
rm -rf "$profile"
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
