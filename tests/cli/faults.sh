# faults.sh - what a run keeps whatever its entries, its signals, its outputs and its
# input do: the fault plugin's entries (crash, abort, exit, hang, garbage on stdout,
# huge memory) each fail alone while the others' results are written; SIGTERM, SIGHUP,
# a closed stdout and SIGKILL followed by --resume; a full stdout (/dev/full), a full
# disk and a read-only folder (a tmpfs in a mount namespace of its own, where one can
# be made); memory limits (RLIMIT_AS, and a memory cgroup where one can be made);
# hostile text. Each case is a row of docs/ERRORS.md, with the message it gets (and the
# usage errors of tests/cli/golden/errors.txt after them): the test rewrites the file
# when TKB_UPDATE_GOLDEN=1 and otherwise fails when it differs.
. "$(dirname "$0")/lib.bash"
DOC=$(dirname "$0")/../../docs/ERRORS.md
ROWS=$CAP/rows     # "id<TAB>row" per case
SKIPS=$CAP/skips   # ids of the cases this machine cannot run
: >"$ROWS"
: >"$SKIPS"
RUN=(run --load "$FAULT_PLUGIN" --tag fault --impl c --iterations 3 --experiments 1)
# Under AddressSanitizer a SIGSEGV is ASan's to report (the process then exits 1) and a
# malloc of 2^50 bytes is its error: here they must be what they are in a release build.
# A small quarantine keeps the memory cgroup's healthy entries within its limit.
SANITIZED=0
if ldd "$TKBENCH" 2>/dev/null | grep -q libasan; then
  SANITIZED=1
  export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0:allocator_may_return_null=1:quarantine_size_mb=16"
fi

# The line of stdout+stderr holding NEEDLE, as the docs show it: folders masked, sizes
# and seconds of this machine masked.
shown() {
  grep -ahF -- "$1" "$CAP/err" "$CAP/out" | head -1 |
    LC_ALL=C sed -e 's/\xff/\\xff/g' -e "s#$TMP#DIR#g" -e "s#$(dirname "$FAULT_PLUGIN")/##g" \
        -e 's#/sys/fs/cgroup/[^ )]*/\(memory[.a-z_]*\)#CGROUP/\1#g' \
        -e 's/[0-9][0-9.]* GiB/N GiB/g' -e 's/after [0-9.]* s /after N s /g' \
        -e 's/|/\\|/g'
}

# row ID WHAT RC NEEDLE CMD...: runs CMD, checks its exit status and that its output holds
# NEEDLE, and records the case for the docs (CMD shown as ${SHOW:-CMD}).
row() {
  local id=$1 what=$2 want=$3 needle=$4
  shift 4
  "$@" >"$CAP/out" 2>"$CAP/err"
  local rc=$?
  if [ "$rc" -ne "$want" ]; then fail "$id: exit $rc, want $want: $(tail -3 "$CAP/err")"; return; fi
  if ! grep -aqF -- "$needle" "$CAP/out" "$CAP/err"; then
    fail "$id: output lacks '$needle': $(tail -5 "$CAP/err")"; return
  fi
  pass
  note "$id" "$what" "$rc" "$(shown "$needle")" "${SHOW:-$*}"
}

# note ID WHAT RC MESSAGE COMMAND: a row of the docs.
note() {
  local cmd=${5//$TKBENCH/tkbench}
  cmd=${cmd//$FAULT_PLUGIN/fault_plugin.so}
  cmd=${cmd//$TMP/DIR}
  cmd=${cmd//|/\\|}
  local what=${2//|/\\|}
  printf '%s\t| %s | `%s` | %s | %s |\n' "$1" "$what" "$cmd" "$3" "$4" >>"$ROWS"
}

# the case keeps its row in the docs from a machine that could run it
skip_case() { echo "SKIPPED case $1: $2"; echo "$1" >>"$SKIPS"; printf '%s\t\n' "$1" >>"$ROWS"; }

# ---- entries that fail in every way: each alone, the others kept ----
row crash "an entry dereferences NULL; others run" 1 "SIGSEGV in forward of fault_crash_forward_c" \
  "$TKBENCH" "${RUN[@]}" --filter 'ok_first|crash|ok_last' --out "$TMP/crash.json"
json_check "$TMP/crash.json" "[b['name'] for b in d['benchmarks'] if b['run_type'] == 'iteration'] == ['fault_ok_first_forward_c', 'fault_crash_forward_c', 'fault_ok_last_forward_c'] and d['benchmarks'][1]['tkbench']['status'] == 'CRASHED'"
[ ! -e "$TMP/crash.json.partial.jsonl" ] && pass || fail "a complete run left its journal"
row abort "an entry calls abort()" 1 "SIGABRT in forward of fault_abort_forward_c" \
  "$TKBENCH" "${RUN[@]}" --filter 'ok_first|abort'
row prepare "an entry's prepare hook crashes" 1 "SIGSEGV in prepare of fault_prepare_forward_c" \
  "$TKBENCH" "${RUN[@]}" --filter 'ok_first|prepare'
row exit "an entry calls exit(3)" 1 "exited with status 3 in forward of fault_exit_forward_c" \
  "$TKBENCH" "${RUN[@]}" --filter 'ok_first|exit'
row nomem "an entry's malloc fails" 1 "malloc of 2^50 bytes failed" \
  "$TKBENCH" "${RUN[@]}" --filter 'ok_first|nomem'
row hang "an entry never returns (--timeout 1)" 1 "timed out in forward of fault_hang_forward_c" \
  "$TKBENCH" "${RUN[@]}" --filter 'ok_first|hang|ok_last' --timeout 1 --out "$TMP/hang.json"
json_check "$TMP/hang.json" "[b['tkbench'].get('status') for b in d['benchmarks'] if b['run_type'] == 'iteration'] == [None, 'TIMEOUT', None]"
# interleaved: one worker holds the entries; the crash fails its entry, a new worker runs
# the others
row interleave "a crash with --interleave" 1 "SIGSEGV in forward of fault_crash_forward_c" \
  "$TKBENCH" "${RUN[@]}" --filter 'ok_first|crash|ok_last' --interleave --experiments 3 --out "$TMP/inter.json"
# (3 experiments each: the failed entry too has a row per repetition, as Google Benchmark writes)
json_check "$TMP/inter.json" "sorted({b['run_name'] for b in d['benchmarks']}) == ['fault_crash_forward_c', 'fault_ok_first_forward_c', 'fault_ok_last_forward_c'] and len([b for b in d['benchmarks'] if b['run_type'] == 'iteration']) == 9"
# on a device, one worker runs the entries in turn: after a crash, a new one goes on
if "$TKBENCH" run --load "$FAULT_PLUGIN" --device opencl:0 --method wallclock --impl ocl --filter ok_first \
     --iterations 1 --experiments 1 --quiet >/dev/null 2>&1; then
  row device_shared "on an OpenCL device, a crash and a hang (--timeout 1)" 1 \
    "SIGSEGV in forward of fault_crash_forward_ocl" \
    "$TKBENCH" run --load "$FAULT_PLUGIN" --device opencl:0 --method wallclock --impl ocl --tag fault --iterations 3 \
    --experiments 1 --timeout 1 --out "$TMP/ocl.json"
  json_check "$TMP/ocl.json" "[b['tkbench'].get('status') for b in d['benchmarks'] if b['run_type'] == 'iteration'] == [None, 'CRASHED', 'TIMEOUT', None]"
else
  skip_case device_shared "no OpenCL device here"
fi
# check isolates too: each implementation against its healthy reference
row check "check: an implementation crashes, another hangs (--timeout 1)" 1 "FAIL fault_crash_forward_c: CRASHED: SIGSEGV in check of fault_crash_forward_c" \
  "$TKBENCH" check --load "$FAULT_PLUGIN" --tag fault --filter 'ok_first|crash|hang|ok_last' --timeout 1
grep -q "FAIL fault_hang_forward_c: TIMEOUT" "$CAP/out" && grep -q "^2 passed, 2 failed" "$CAP/out" && pass ||
  fail "check: $(cat "$CAP/out")"
# an entry's prints go to stderr: stdout's JSON stays a document
"$TKBENCH" "${RUN[@]}" --filter 'ok_first|garbage' --format json >"$TMP/garbage.json" 2>"$CAP/err"
json_check "$TMP/garbage.json" "len([b for b in d['benchmarks'] if b['run_type'] == 'iteration']) == 2"
grep -q "garbage from an entry" "$CAP/err" && pass || fail "the entry's print is not on stderr"
note garbage "an entry prints to stdout (--format json)" 0 "its text goes to stderr; stdout holds the JSON document" \
  "$TKBENCH ${RUN[*]} --filter 'ok_first|garbage' --format json"
# in process, a crash is the process's
"$TKBENCH" "${RUN[@]}" --filter 'ok_first|crash' --no-isolate --out "$TMP/inproc.json" >/dev/null 2>&1
rc=$?
[ $rc -eq 139 ] && [ ! -e "$TMP/inproc.json" ] && pass || fail "--no-isolate crash: exit $rc"
note no_isolate "a crash with --no-isolate" $rc "the process dies of SIGSEGV; the journal keeps the entries before it" \
  "tkbench ${RUN[*]} --filter 'ok_first|crash' --no-isolate --out DIR/inproc.json"
rm -f "$TMP/inproc.json.partial.jsonl"

# ---- memory ----
row huge "an input larger than memory" 1 "the largest part is argument 'x' (float32[1099511627776]" \
  "$TKBENCH" "${RUN[@]}" --filter 'ok_first|huge'
if [ $SANITIZED = 0 ]; then
  SHOW="(ulimit -v 4000000; tkbench ${RUN[*]} --filter huge)" \
    row rlimit "an input past RLIMIT_AS" 1 "the address-space limit RLIMIT_AS (ulimit -v)" \
    bash -c 'ulimit -v 4000000; exec "$@"' _ "$TKBENCH" "${RUN[@]}" --filter huge
else
  skip_case rlimit "AddressSanitizer's shadow memory needs more address space than ulimit -v leaves"
fi
# a memory cgroup of our own, under the one we are in (v2 or v1)
make_cgroup() {
  local v2 v1 path
  path=$(awk -F: '$1 == "0" && $2 == "" {print $3}' /proc/self/cgroup)
  v2=$(awk '$9 == "cgroup2" {print $5; exit}' /proc/self/mountinfo)
  if [ -n "$v2" ] && [ -n "$path" ] && [ -e "$v2$path/cgroup.controllers" ] &&
     grep -qw memory "$v2$path/cgroup.controllers" 2>/dev/null &&
     mkdir "$v2${path%/}/tkb_test_$$" 2>/dev/null; then
    CG=$v2${path%/}/tkb_test_$$; echo $((256 << 20)) >"$CG/memory.max" && return 0
    rmdir "$CG"
  fi
  path=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ {print $3}' /proc/self/cgroup)
  v1=$(awk '$9 == "cgroup" && $NF ~ /memory/ {print $5; exit}' /proc/self/mountinfo)
  if [ -n "$v1" ] && [ -n "$path" ] && mkdir "$v1${path%/}/tkb_test_$$" 2>/dev/null; then
    CG=$v1${path%/}/tkb_test_$$; echo $((256 << 20)) >"$CG/memory.limit_in_bytes" && return 0
    rmdir "$CG"
  fi
  return 1
}
CG=
if make_cgroup; then
  in_cgroup() { bash -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG" "$@"; }
  SHOW="(in a 256 MiB memory cgroup) tkbench ${RUN[*]} --filter 'ok_first|huge'" \
    row cgroup_check "an input past the cgroup's limit" 1 "but the cgroup's memory" \
    in_cgroup "$TKBENCH" "${RUN[@]}" --filter 'ok_first|huge'
  SHOW="(in a 256 MiB memory cgroup, FAULT_EAT_MIB=1024) tkbench ${RUN[*]} --filter 'ok_first|eat|ok_last'" \
    row cgroup_oom "an entry that grows past the cgroup's limit" 1 "SIGKILL in forward of fault_eat_forward_c" \
    in_cgroup env FAULT_EAT_MIB=1024 "$TKBENCH" "${RUN[@]}" --filter 'ok_first|eat|ok_last' --out "$TMP/oom.json"
  json_check "$TMP/oom.json" "len([b for b in d['benchmarks'] if b['run_type'] == 'iteration']) == 3"
  rmdir "$CG" 2>/dev/null
else
  skip_case cgroup_check "no memory cgroup can be made here (not root, or no writable memory controller)"
  skip_case cgroup_oom "no memory cgroup can be made here"
fi

# ---- signals, a closed stdout, SIGKILL and --resume ----
SLOW=(--filter 'ok_first|slow|ok_last')
# starts a run in the background; waits until its journal holds a finished entry
start_slow() {
  rm -f "$TMP/$1" "$TMP/$1.partial.jsonl"
  "$TKBENCH" "${RUN[@]}" "${SLOW[@]}" --out "$TMP/$1" >"$CAP/out" 2>"$CAP/err" &
  pid=$!
  for _ in $(seq 200); do
    [ "$(cat "$TMP/$1.partial.jsonl" 2>/dev/null | wc -l)" -ge 2 ] && break
    sleep 0.05
  done
  sleep 0.2 # into fault_slow's worker
}
for sig in TERM HUP INT; do
  start_slow "$sig.json"
  kill -$sig $pid
  wait $pid
  rc=$?
  want=$((128 + $(kill -l $sig)))
  [ $rc -eq $want ] && pass || fail "SIG$sig: exit $rc, want $want: $(cat "$CAP/err")"
  json_check "$TMP/$sig.json" "d['context']['interrupted'] and [b['name'] for b in d['benchmarks'] if b['run_type'] == 'iteration'] == ['fault_ok_first_forward_c']"
  grep -q "keeps the finished entries" "$CAP/err" && pass || fail "SIG$sig: journal not kept: $(cat "$CAP/err")"
  note "sig$sig" "SIG$sig during an entry" $rc "$(shown "interrupted: ")" \
    "tkbench ${RUN[*]} ${SLOW[*]} --out DIR/$sig.json & kill -$sig \$!"
done
# --resume continues the SIGTERM'd run: the finished entry is kept, the others run
SHOW="tkbench ${RUN[*]} ${SLOW[*]} --resume DIR/TERM.json" \
  row resume "--resume after SIGTERM" 0 "wrote $TMP/TERM.json" \
  "$TKBENCH" "${RUN[@]}" "${SLOW[@]}" --resume "$TMP/TERM.json"
json_check "$TMP/TERM.json" "not d['context']['interrupted'] and [b['name'] for b in d['benchmarks'] if b['run_type'] == 'iteration'] == ['fault_ok_first_forward_c', 'fault_slow_forward_c', 'fault_ok_last_forward_c']"
[ ! -e "$TMP/TERM.json.partial.jsonl" ] && pass || fail "the journal outlived a complete run"
# a new run where a journal is left refuses, saying how to go on
row journal_left "a run where an interrupted run's journal is left" 2 "exists: a run that did not finish left it" \
  "$TKBENCH" "${RUN[@]}" "${SLOW[@]}" --out "$TMP/HUP.json"
# --resume with other options names the field
row resume_other "--resume with another --seed" 2 "was written with seed 0, this run has 7" \
  "$TKBENCH" "${RUN[@]}" "${SLOW[@]}" --seed 7 --resume "$TMP/HUP.json"
# SIGKILL: no file, the journal, no worker left behind; --resume finishes it
start_slow kill.json
worker=$(pgrep -P $pid | head -1)
kill -KILL $pid
wait $pid 2>/dev/null
sleep 0.3
[ ! -e "$TMP/kill.json" ] && [ -e "$TMP/kill.json.partial.jsonl" ] && pass || fail "SIGKILL: $(ls -A "$TMP")"
# gone, or a zombie that only waits for whoever adopted it to reap it
state=$(awk '{print $3}' "/proc/$worker/stat" 2>/dev/null)
{ [ -z "$worker" ] || [ -z "$state" ] || [ "$state" = Z ]; } && pass ||
  fail "SIGKILL left worker $worker running (state $state)"
# a temporary of a dead process is removed, one of a live process is not
sh -c 'exit 0' & dead=$!
wait $dead
touch "$TMP/.kill.json.tmp.$dead" "$TMP/.kill.json.tmp.$$"
printf '{"benchmarks": [{"na' >>"$TMP/kill.json.partial.jsonl" # a line cut off mid-write
SHOW="tkbench ${RUN[*]} ${SLOW[*]} --resume DIR/kill.json" \
  row sigkill "--resume after SIGKILL (a journal line cut off)" 0 "the journal's last line was cut off" \
  "$TKBENCH" "${RUN[@]}" "${SLOW[@]}" --resume "$TMP/kill.json"
json_check "$TMP/kill.json" "[b['name'] for b in d['benchmarks'] if b['run_type'] == 'iteration'] == ['fault_ok_first_forward_c', 'fault_slow_forward_c', 'fault_ok_last_forward_c']"
[ ! -e "$TMP/.kill.json.tmp.$dead" ] && [ -e "$TMP/.kill.json.tmp.$$" ] && pass ||
  fail "stale temporaries: $(ls -A "$TMP" | grep tmp)"
rm -f "$TMP/.kill.json.tmp.$$"
# a closed stdout: the run stops, the file is written
"$TKBENCH" "${RUN[@]}" "${SLOW[@]}" --out "$TMP/pipe.json" 2>"$CAP/err" | head -2 >/dev/null
rc=${PIPESTATUS[0]}
[ "$rc" -eq 141 ] && pass || fail "| head: exit $rc, want 141: $(cat "$CAP/err")"
json_check "$TMP/pipe.json" "d['context']['interrupted']"
# how many entries finish before head has gone is a race: N
note sigpipe "stdout closed (| head -2)" "$rc" "$(shown "stdout closed" | sed 's/[0-9]* of 3/N of 3/')" \
  "tkbench ${RUN[*]} ${SLOW[*]} --out DIR/pipe.json | head -2"
rm -f "$TMP"/*.partial.jsonl

# ---- outputs that cannot be written ----
for cmd in run list info; do
  args=("$cmd")
  [ "$cmd" = run ] && args=("${RUN[@]}" --filter 'ok_first|ok_last')
  SHOW="tkbench ${args[*]} > /dev/full" \
    row "full_$cmd" "stdout is full ($cmd)" 1 "cannot write to stdout: " \
    bash -c '"$@" >/dev/full' _ "$TKBENCH" "${args[@]}"
  grep -q "No space left on device" "$CAP/err" && pass || fail "$cmd > /dev/full: $(cat "$CAP/err")"
done
# a small tmpfs (full) and a read-only one, in a mount namespace of this test's own
mkdir -p "$TMP/mnt"
if unshare -m --propagation private true 2>/dev/null; then
  in_tmpfs() { unshare -m --propagation private bash -c \
    'mount -t tmpfs -o "size=$0" tmpfs "$1" && { [ "$2" != ro ] || mount -o remount,ro "$1"; } && shift 2 && "$@"' "$@"; }
  SHOW="(DIR on a 4 KiB tmpfs) tkbench ${RUN[*]} --filter 'ok_first|ok_last' --out DIR/x.json" \
    row journal_full "the disk fills as the journal grows" 1 "write failed: No space left on device; stopping" \
    in_tmpfs 4k "$TMP/mnt" rw "$TKBENCH" "${RUN[@]}" --filter 'ok_first|ok_last' --out "$TMP/mnt/x.json"
  SHOW="(DIR on a 12 KiB tmpfs) tkbench ${RUN[*]} --filter -'hang|slow|eat|huge' --out DIR/x.json" \
    row disk_full "the disk fills as the file is written" 1 "write failed (No space left on device)" \
    in_tmpfs 12k "$TMP/mnt" rw "$TKBENCH" "${RUN[@]}" --filter -'hang|slow|eat|huge' --out "$TMP/mnt/x.json"
  grep -q "the journal .* keeps the finished entries" "$CAP/err" && pass ||
    fail "disk full: the journal is not named: $(cat "$CAP/err")"
  SHOW="(DIR read-only) tkbench ${RUN[*]} --out DIR/x.json" \
    row read_only "--out in a read-only folder" 2 "is not writable (Read-only file system)" \
    in_tmpfs 64k "$TMP/mnt" ro "$TKBENCH" "${RUN[@]}" --filter ok_first --out "$TMP/mnt/x.json"
else
  skip_case journal_full "no mount namespace can be made here (unshare -m needs CAP_SYS_ADMIN)"
  skip_case disk_full "no mount namespace can be made here (unshare -m needs CAP_SYS_ADMIN)"
  skip_case read_only "no mount namespace can be made here"
fi

# ---- hostile text ----
row regex "a filter whose automaton would explode" 2 "stacks repetitions ('+' right after '+'" \
  "$TKBENCH" list --filter 'x++++++++++++++++++++++++'
row regex_nest "nested repetitions" 2 "nests repetitions that copy one part 10000 times" \
  "$TKBENCH" run --filter '(a{100}){100}'
SHOW="tkbench list --filter \"\$(printf 'a%.0s' \$(seq 600))\"" \
  row regex_long "a 600-character filter" 2 "is 600 characters long; at most 512" \
  "$TKBENCH" list --filter "$(printf 'a%.0s' $(seq 600))"
mkfifo "$TMP/fifo.so"
row fifo "--load of a FIFO" 2 "is a FIFO; a shared object is a regular file" \
  "$TKBENCH" list --load "$TMP/fifo.so"
row device_empty "an empty --device=" 2 "device \"\" is not a device name" "$TKBENCH" run --device=
row tag "an unknown --tag" 2 "tag \"nosuchtag\" is on no registered entry; the tags are" \
  "$TKBENCH" list --tag nosuchtag
row timeout_bad "--timeout abc" 2 "--timeout 'abc' is not a number of seconds" \
  "$TKBENCH" run --timeout abc
row isolate_both "--isolate --no-isolate" 2 "contradict each other" "$TKBENCH" run --isolate --no-isolate
row resume_out "--resume and --out naming different files" 2 "name different files" \
  "$TKBENCH" run --resume "$TMP/a.json" --out "$TMP/b.json"
# an executable whose name is not UTF-8: the JSON stays valid UTF-8, with a warning
ln -s "$TKBENCH" "$TMP/tkb$(printf '\xff')bench"
SHOW="DIR/tkb\\xffbench ${RUN[*]} --filter ok_first --out DIR/utf8.json" \
  row utf8 "the executable's name is not UTF-8" 0 "were not UTF-8" \
  "$TMP/tkb$(printf '\xff')bench" "${RUN[@]}" --filter ok_first --out "$TMP/utf8.json"
json_check "$TMP/utf8.json" "d['context']['executable'].endswith('tkb\ufffdbench')"

# ---- the docs table: these rows, then the usage errors of the golden file ----
python3 - "$ROWS" "$SKIPS" "$DOC" "$(dirname "$0")/golden/errors.txt" "${TKB_UPDATE_GOLDEN:-0}" >"$CAP/doc" 2>&1 <<'PY'
import sys
rows_path, skips_path, doc_path, errors_path, update = sys.argv[1:6]
update = update not in ("", "0")
rows = [l.rstrip("\n").split("\t", 1) for l in open(rows_path) if l.strip()]
skips = {l.strip() for l in open(skips_path) if l.strip()}
try:
    old = open(doc_path).read()
except FileNotFoundError:
    old = ""
# a skipped case keeps the row it has (from a machine that could run it)
kept = {}
lines = old.splitlines()
for i, line in enumerate(lines[:-1]):
    if line.startswith("<!-- case ") and line.endswith(" -->"):
        kept[line[len("<!-- case "):-len(" -->")]] = lines[i + 1]
body = ["# What tkbench does with bad input and faults", "",
        "Generated by `tests/cli/faults.sh` (`TKB_UPDATE_GOLDEN=1` rewrites it; the test fails when",
        "this file and what tkbench does differ). `DIR` is a scratch folder; sizes and seconds of the",
        "machine that ran it are shown as N. The fault plugin is `tests/fault_plugin.c`; its entries",
        "run 3 timed calls in 1 experiment (`--iterations 3 --experiments 1`).", "",
        "## Faults, signals, outputs and hostile text", "",
        "| Case | Command | Exit | Message |", "|---|---|---|---|"]
for cid, row in rows:
    if cid in skips:
        row = kept.get(cid)
    if row:
        body += ["<!-- case %s -->" % cid, row]
body += ["", "## Usage errors", "",
         "Exit 2, nothing runs and no file is written (from `tests/cli/golden/errors.txt`, which",
         "`test_cli` checks).", "", "| Command | Message |", "|---|---|"]
text = open(errors_path).read().strip().split("\n\n")
for block in text:
    lines = block.splitlines()
    cmd = lines[0][2:] if lines[0].startswith("$ ") else lines[0]
    msg = lines[2] if len(lines) > 2 else ""
    body.append("| `%s` | %s |" % (cmd.replace("|", "\\|"), msg.replace("|", "\\|")))
new = "\n".join(body) + "\n"
if update:
    open(doc_path, "w").write(new)
    sys.exit(0)
if new != old:
    import difflib
    sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), new.splitlines(True), "docs/ERRORS.md", "now"))
    sys.exit(1)
PY
[ $? -eq 0 ] && pass || fail "docs/ERRORS.md differs from what tkbench does (TKB_UPDATE_GOLDEN=1 rewrites it):
$(cat "$CAP/doc")"
finish
