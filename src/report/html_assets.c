/* html_assets.c - the HTML report's style sheet and script, inlined into every page so it
 * works offline. The CSS names the classes the plots use (svg.h, plots.c), so colours and
 * strokes live here; the script only sorts and filters, and the page reads whole without
 * it. */
#include "html.h"

const char *const tkb__html_css =
    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:0 auto;max-width:1180px;"
    "padding:0 16px 48px;color:#1d1d1f;background:#fff}"
    "h1{font-size:22px;margin:20px 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ddd}"
    "h3{font-size:15px;margin:0 0 4px;font-family:ui-monospace,Menlo,Consolas,monospace;word-break:break-all}"
    "table{border-collapse:collapse;font-variant-numeric:tabular-nums}"
    "td,th{padding:3px 6px;border-bottom:1px solid #eee;text-align:right;white-space:nowrap}"
    "td:first-child,th:first-child{text-align:left}.l{text-align:left}td.w{white-space:normal}"
    "#summary td:first-child,#comparison td:first-child{font-family:ui-monospace,Menlo,Consolas,monospace;"
    "font-size:12.5px;white-space:normal;min-width:260px}"
    "th{background:#f6f6f6;position:sticky;top:0;cursor:pointer;user-select:none}"
    "th[aria-sort=ascending]::after{content:' \\25B2'}th[aria-sort=descending]::after{content:' \\25BC'}"
    "dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:0}dt{color:#666}dd{margin:0}"
    ".warn{color:#8a4b00;background:#fff6e5;border-left:3px solid #f0a000;padding:4px 8px;margin:4px 0;list-style:none}"
    ".entry{border-top:1px solid #e4e4e4;padding:12px 0}.facts{color:#444;margin:2px 0 6px}"
    ".plots{display:flex;flex-wrap:wrap;gap:6px 18px}.st-FAILED,.st-SKIPPED{font-weight:600}"
    ".st-FAILED{color:#b00020}.st-SKIPPED{color:#666}"
    "#filter{font:inherit;padding:4px 8px;width:340px;margin:6px 0}"
    "svg{overflow:visible}text{font:11px system-ui,sans-serif;fill:#444}.tx,.ty{fill:#555}"
    ".tx{text-anchor:middle}.ty{text-anchor:end}.at{fill:#777;font-style:italic}"
    ".ax{stroke:#888;stroke-width:1}.grid{stroke:#eee;stroke-width:1}"
    ".box{fill:#dbe8f7;stroke:#3b6fb6}.ci{fill:#3b6fb6;opacity:.35}.med{stroke:#0b3d91;stroke-width:2.5}"
    ".wh{stroke:#3b6fb6;stroke-width:1.2}.dot{stroke:#3b6fb6;stroke-width:4;stroke-linecap:round;opacity:.55}"
    ".om{stroke:#e08a00;stroke-width:4;stroke-linecap:round}.os{stroke:#c81e1e;stroke-width:4.5;stroke-linecap:round}"
    ".vio{fill:#cfe0f5;stroke:#3b6fb6;stroke-width:1}.rng{stroke:#9bb8de;stroke-width:2}.binmed{fill:none;stroke:#3b6fb6;stroke-width:1.2}"
    ".eb{stroke:#aaa;stroke-dasharray:3 3}.em{stroke:#0b3d91;stroke-width:2}"
    ".thr{stroke:#c81e1e;stroke-width:6;stroke-linecap:square}"
    ".bar{fill:#7aa6dc}.peak{stroke:#333;stroke-width:2}.lbl{fill:#222}"
    ".band{fill:#eee}.one{stroke:#555;stroke-dasharray:2 2}.fn,g.fn text{font:11px ui-monospace,Menlo,monospace;fill:#333}"
    ".civ{stroke-width:2}.pt{stroke-width:7;stroke-linecap:round}"
    ".faster .civ,.faster .pt{stroke:#1a7f37}.slower .civ,.slower .pt{stroke:#c81e1e}"
    ".same .civ,.same .pt{stroke:#777}.unsure .civ,.unsure .pt{stroke:#d4a000}"
    "td.faster{color:#1a7f37;font-weight:600}td.slower{color:#c81e1e;font-weight:600}td.unsure{color:#8a6d00}"
    ".key{color:#666;font-size:12px}"
    /* the machine's warnings: one line, the sentences on a click */
    "details.machine{color:#8a4b00;background:#fff6e5;border-left:3px solid #f0a000;padding:4px 8px;margin:6px 0}"
    "details.machine summary{cursor:pointer}details.machine ul{padding-left:8px;margin:4px 0}"
    "details.machine li.warn{border-left:0;padding:2px 0;margin:0}"
    "details.overview summary{cursor:pointer;color:#444;margin:4px 0}h3.sub{font-family:inherit;margin:16px 0 4px}"
    /* how far a median can be trusted */
    ".st-wide,.st-unconverged{color:#8a6d00;font-weight:600}.st-noint{color:#666}"
    ".facts .faster{color:#1a7f37}.facts .slower{color:#c81e1e}.facts .unsure{color:#8a6d00}"
    /* the overview's rows: blue when ok, amber when in doubt */
    ".ok .civ,.ok .pt{stroke:#3b6fb6}.doubt .civ,.doubt .pt{stroke:#d4a000}"
    /* a base run drawn with the new one: purple beside the new run's blue */
    ".sw{fill:#3b6fb6}.base .sw{fill:#7b4fa0}.base .box{fill:#eadcf5;stroke:#7b4fa0}.base .ci{fill:#7b4fa0}"
    ".base .med{stroke:#4d2a6e}.base .wh{stroke:#7b4fa0}.base .dot{stroke:#7b4fa0}"
    ".base .vio{fill:#e6d8f2;stroke:#7b4fa0}.base .rng{stroke:#c5acd9}.base .binmed{stroke:#7b4fa0}"
    ".base .em{stroke:#4d2a6e}";

/* Sorting and filtering the summary; the page reads whole without it. */
const char *const tkb__html_script =
    "(function(){"
    /* a cell's sort key: its data-v when it has one (the median, exact), else its text,
       read with its unit or SI prefix ("52.95 us", "±12%", "225.5 k") */
    "var units={ns:1e-6,us:1e-3,ms:1,s:1e3,k:1e3,M:1e6,G:1e9,T:1e12,P:1e15,E:1e18};"
    "function key(td,num){var v=td.getAttribute('data-v');if(v!==null&&!num)return v;"
    "if(v===null){var t=td.textContent;if(!num)return t;"
    "var m=t.replace('\u00b1','').match(/^\\s*([-+0-9.eE]+)\\s*([a-zA-Z]*)/);if(!m)return null;"
    "var x=parseFloat(m[1])*(units[m[2]]||1);return isNaN(x)?null:x}"
    "var y=parseFloat(v);return isNaN(y)?null:y}"
    "function sortBy(t,i,th){var asc=th.getAttribute('aria-sort')!=='ascending';"
    "var hs=th.parentNode.cells;for(var k=0;k<hs.length;k++)hs[k].removeAttribute('aria-sort');"
    "th.setAttribute('aria-sort',asc?'ascending':'descending');var num=th.getAttribute('data-type')==='num';"
    "var b=t.tBodies[0],rows=Array.prototype.slice.call(b.rows);"
    "rows.sort(function(r,s){var x=key(r.cells[i],num),y=key(s.cells[i],num);"
    "if(x===null||x==='')return y===null||y===''?0:1;if(y===null||y==='')return -1;"
    "var c=num?x-y:String(x).localeCompare(String(y));return asc?c:-c});"
    "rows.forEach(function(r){b.appendChild(r)})}"
    "var tables=document.querySelectorAll('table.sortable');"
    "Array.prototype.forEach.call(tables,function(t){var hs=t.tHead.rows[0].cells;"
    "Array.prototype.forEach.call(hs,function(th,i){th.tabIndex=0;"
    "th.addEventListener('click',function(){sortBy(t,i,th)});"
    "th.addEventListener('keydown',function(ev){if(ev.key==='Enter')sortBy(t,i,th)})})});"
    "var t=document.getElementById('summary');if(!t)return;var inp=document.createElement('input');"
    "inp.type='search';inp.id='filter';inp.placeholder='filter entries (regular expression)';"
    "t.parentNode.insertBefore(inp,t);function apply(){var re;"
    "try{re=new RegExp(inp.value)}catch(e){re=null}"
    "function hit(s){return re?re.test(s):s.indexOf(inp.value)>=0}"
    "Array.prototype.forEach.call(t.tBodies[0].rows,function(r){r.hidden=!hit(r.cells[0].textContent)});"
    "Array.prototype.forEach.call(document.querySelectorAll('section.entry'),function(s){"
    "s.hidden=!hit(s.querySelector('h3').textContent)})}"
    "inp.addEventListener('input',apply);"
    /* a link to the page with #filter=REGEX opens it filtered */
    "var h=location.hash.match(/^#filter=(.*)$/);if(h){inp.value=decodeURIComponent(h[1]);apply()}})();";

