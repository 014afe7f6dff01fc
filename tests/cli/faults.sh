# faults.sh - what a run keeps whatever its entries, its signals, its outputs and its
# input do: the fault plugin's entries (crash, abort, exit, hang, garbage on stdout,
# huge memory) each fail alone while the others' results are written; SIGTERM, SIGHUP,
# a closed stdout and SIGKILL followed by --resume; a full stdout (/dev/full), a full
# disk and a read-only folder (a tmpfs in a mount namespace of its own, where one can
# be made); memory limits (RLIMIT_AS, and a memory cgroup where one can be made);
# hostile text; entries that start helpers and daemons, stray descriptors, exit(0), a
# plugin's init that exits or hangs, --no-isolate; output paths that are devices, FIFOs,
# symlinks or stdout; journals with bad lines and --resume with other settings or another
# selection; hostile results files for compare, merge and report; exit codes and
# messages. Each case is a row of docs/ERRORS.md, with the message it gets (and the
# usage errors of tests/cli/golden/errors.txt after them): the test rewrites the file
# when TKB_UPDATE_GOLDEN=1 and otherwise fails when it differs.
. "$(dirname "$0")/lib.bash"
DOC=$(dirname "$0")/../../docs/ERRORS.md
ROWS=$CAP/rows     # "id<TAB>row" per case
SKIPS=$CAP/skips   # ids of the cases this machine cannot run
: >"$ROWS"
: >"$SKIPS"
RUN=(run --load "$FAULT_PLUGIN" --tag fault --impl c --iterations 3 --experiments 1)
# the entries that attack isolation itself (tagged "hostile", so RUN never meets them)
HOSTILE=(run --load "$FAULT_PLUGIN" --impl c --iterations 3 --experiments 1)
# Under AddressSanitizer a SIGSEGV is ASan's to report (the process then exits 1) and a
# malloc of 2^50 bytes is its error: here they must be what they are in a release build.
# A small quarantine keeps the memory cgroup's healthy entries within its limit.
SANITIZED=0
if ldd "$TKBENCH" 2>/dev/null | grep -q libasan; then
  SANITIZED=1
  export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0:allocator_may_return_null=1:quarantine_size_mb=16"
fi

# The line of stdout+stderr holding NEEDLE, as the docs show it: folders masked, sizes,
# seconds, process ids, thread counts, the cpu path and the suite's size of this machine
# masked.
shown() {
  grep -ahF -- "$1" "$CAP/err" "$CAP/out" | head -1 |
    LC_ALL=C sed -e 's/\xff/\\xff/g' -e "s#$TMP#DIR#g" -e "s#$(dirname "$FAULT_PLUGIN")/##g" \
        -e 's#/sys/fs/cgroup/[^ )]*/\(memory[.a-z_]*\)#CGROUP/\1#g' \
        -e 's/[0-9][0-9.]* GiB/N GiB/g' -e 's/after [0-9.]* s /after N s /g' \
        -e 's/[0-9][0-9]* (tkbench)/PID (tkbench)/g' -e 's/--threads [0-9][0-9]*/--threads N/g' \
        -e 's/TKB_CPU_ISA=avx[0-9]*/TKB_CPU_ISA=(the best path)/g' \
        -e 's/this run selects [0-9]* with/this run selects N with/' \
        -e 's/|/\\|/g'
}

# row ID WHAT RC NEEDLE CMD...: runs CMD, checks its exit status and that its output holds
# NEEDLE, and records the case for the docs (CMD shown as ${SHOW:-CMD}).
row() {
  local id=$1 what=$2 want=$3 needle=$4
  shift 4
  local rc
  if [ -n "${EARLY[$id]:-}" ]; then
    early_result "$id"
    rc=$?
  else
    "$@" >"$CAP/out" 2>"$CAP/err"
    rc=$?
  fi
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

# Three cases wait out one of tkbench's 10 s limits (a FIFO nobody opens, a slow pipe):
# they start here, side by side in the background, and their rows below take what they
# printed (early_result) instead of running them one after another (30 s of waiting).
# early ID CMD...: starts CMD now, keeping its output and exit status for ID.
declare -A EARLY=()
early() {
  local id=$1
  shift
  { "$@" >"$CAP/early.$id.out" 2>"$CAP/early.$id.err"; echo $? >"$CAP/early.$id.rc"; } &
  EARLY[$id]=$!
}
# early_result ID: waits for ID's command; its output into $CAP/out and $CAP/err, and
# returns its exit status.
early_result() {
  wait "${EARLY[$1]}"
  cp "$CAP/early.$1.out" "$CAP/out"
  cp "$CAP/early.$1.err" "$CAP/err"
  return "$(cat "$CAP/early.$1.rc")"
}
OK=(--filter 'ok_first|ok_last' --quiet)
"$TKBENCH" "${RUN[@]}" "${OK[@]}" --out "$TMP/good.json"
mkdir "$TMP/alone" # its journal out of the way of the cases that clear $TMP's
mkfifo "$TMP/in.fifo" "$TMP/alone/out.fifo"
early read_fifo "$TKBENCH" compare "$TMP/in.fifo" "$TMP/good.json"
early read_slow "$TKBENCH" compare <(sleep 11; cat "$TMP/good.json") "$TMP/good.json"
early out_fifo_alone "$TKBENCH" "${RUN[@]}" "${OK[@]}" --out "$TMP/alone/out.fifo"

# ---- entries that fail in every way: each alone, the others kept ----
row crash "an entry dereferences NULL; others run" 1 "SIGSEGV in forward of fault_crash_forward_c" \
  "$TKBENCH" "${RUN[@]}" --filter 'ok_first|crash|ok_last' --out "$TMP/crash.json"
json_check "$TMP/crash.json" "[b['name'] for b in d['benchmarks'] if b['run_type'] == 'iteration'] == ['fault_ok_first_forward_c', 'fault_crash_forward_c', 'fault_ok_last_forward_c'] and d['benchmarks'][1]['tkbench']['status'] == 'CRASHED'"
[ ! -e "$TMP/crash.json.partial.jsonl" ] && pass || fail "a complete run left its journal"
row abort "an entry calls abort()" 1 "SIGABRT in forward of fault_abort_forward_c" \
  "$TKBENCH" "${RUN[@]}" --filter 'ok_first|abort'
row prepare "an entry's prepare hook crashes" 1 "SIGSEGV in prepare of fault_prepare_forward_c" \
  "$TKBENCH" "${RUN[@]}" --filter 'ok_first|prepare'
row exit "an entry calls exit(3)" 1 "called exit(3) in forward of fault_exit_forward_c" \
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
  # 3 s: a worker that follows a crash opens the OpenCL device again, which took over 1 s
  # on a busy machine
  row device_shared "on an OpenCL device, a crash and a hang (--timeout 3)" 1 \
    "SIGSEGV in forward of fault_crash_forward_ocl" \
    "$TKBENCH" run --load "$FAULT_PLUGIN" --device opencl:0 --method wallclock --impl ocl --tag fault --iterations 3 \
    --experiments 1 --timeout 3 --out "$TMP/ocl.json"
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
row resume_other "--resume with another --seed" 2 "was written with --seed 0; this run has --seed 7" \
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

# ---- what an entry starts: helpers and daemons are the entry's, killed and named ----
# whole seconds since $1 (date +%s)
since() { echo $(($(date +%s) - $1)); }
# no process of this test's own left whose command line holds $1 (a helper is a fork of
# tkbench, so it carries tkbench's command line)
none_left() {
  local left
  left=$(pgrep -f -- "$1" | grep -vx "$$" | tr '\n' ' ')
  [ -z "$left" ] && pass || { fail "$2: left running: $left"; kill -KILL $left 2>/dev/null; }
}
# the helpers sleep 60 s: a run that waited for one takes that long
t0=$(date +%s)
row helper "an entry leaves a helper process running" 1 "left 1 process running after it returned, killed now:" \
  "$TKBENCH" "${HOSTILE[@]}" --filter '^fault_helper_' --out "$TMP/helper.json"
[ "$(since "$t0")" -lt 45 ] && pass || fail "helper: the run waited for the helper ($(since "$t0") s)"
none_left "$TMP/helper.json" helper
row daemon "an entry starts a daemon (fork, setsid, fork again)" 1 "left 1 process running after it returned, killed now:" \
  "$TKBENCH" "${HOSTILE[@]}" --filter '^fault_daemon_' --out "$TMP/daemon.json"
none_left "$TMP/daemon.json" daemon
t0=$(date +%s)
row hang_helper "an entry starts a helper, then never returns (--timeout 2)" 1 "1 process it started was killed with it" \
  "$TKBENCH" "${HOSTILE[@]}" --filter '^fault_hang_helper_' --timeout 2 --out "$TMP/hang_helper.json"
[ "$(since "$t0")" -lt 45 ] && pass || fail "hang_helper: --timeout 2 took $(since "$t0") s"
none_left "$TMP/hang_helper.json" hang_helper
# SIGTERM with no time limit: the run stops at once, helper and all
"$TKBENCH" "${HOSTILE[@]}" --filter '^fault_hang_helper_' --timeout 0 --out "$TMP/term_helper.json" \
  >"$CAP/out" 2>"$CAP/err" &
pid=$!
sleep 2
t0=$(date +%s)
kill -TERM $pid
for _ in $(seq 450); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
if kill -0 $pid 2>/dev/null; then
  fail "SIGTERM did not stop a run whose entry started a helper"
  kill -KILL $pid
fi
wait $pid
rc=$?
[ $rc -eq 143 ] && pass || fail "SIGTERM with a helper: exit $rc, want 143"
[ "$(since "$t0")" -lt 20 ] && pass || fail "SIGTERM with a helper took $(since "$t0") s"
none_left "$TMP/term_helper.json" term_helper
note term_helper "SIGTERM while an entry that started a helper hangs (--timeout 0)" $rc \
  "the run stops at once; the worker and its helper are killed" \
  "tkbench ${HOSTILE[*]} --filter '^fault_hang_helper_' --timeout 0 --out DIR/x.json & kill -TERM \$!"
rm -f "$TMP"/*.partial.jsonl

# ---- one entry, a plugin's init, --no-isolate ----
row single_hang "one entry alone never returns (--timeout 2)" 1 "timed out in forward of fault_hang_forward_c" \
  "$TKBENCH" "${RUN[@]}" --filter '^fault_hang_' --timeout 2
row exit0 "one entry alone calls exit(0)" 1 "called exit(0) in forward of fault_exit0_forward_c" \
  "$TKBENCH" "${HOSTILE[@]}" --filter '^fault_exit0_'
row exit0_inproc "--no-isolate: an entry calls exit(0) (--format json)" 1 "which ends the process under --no-isolate" \
  "$TKBENCH" "${HOSTILE[@]}" --filter '^fault_exit0_' --no-isolate --format json
json_check "$CAP/out" "[b['tkbench']['status'] for b in d['benchmarks']] == ['CRASHED']"
"$TKBENCH" "${RUN[@]}" --filter 'ok_first|garbage' --no-isolate --format json >"$TMP/garbage_inproc.json" 2>"$CAP/err"
rc=$?
json_check "$TMP/garbage_inproc.json" "len([b for b in d['benchmarks'] if b['run_type'] == 'iteration']) == 2"
grep -q "garbage from an entry" "$CAP/err" && pass || fail "--no-isolate: the entry's print is not on stderr"
note garbage_inproc "--no-isolate: an entry prints to stdout (--format json)" $rc \
  "its text goes to stderr; stdout holds the JSON document" \
  "$TKBENCH ${RUN[*]} --filter 'ok_first|garbage' --no-isolate --format json"
SHOW="FAULT_INIT=exit0 tkbench ${RUN[*]} --filter ok_first" \
  row init_exit "a plugin's tkb_plugin_init calls exit(0)" 2 "its tkb_plugin_init called exit(0)" \
  env FAULT_INIT=exit0 "$TKBENCH" "${RUN[@]}" --filter ok_first
SHOW="FAULT_INIT=crash tkbench ${RUN[*]} --filter ok_first" \
  row init_crash "a plugin's tkb_plugin_init dereferences NULL" 2 "its tkb_plugin_init died of SIGSEGV" \
  env FAULT_INIT=crash "$TKBENCH" "${RUN[@]}" --filter ok_first
SHOW="FAULT_INIT=hang tkbench ${RUN[*]} --filter ok_first --timeout 2" \
  row init_hang "a plugin's tkb_plugin_init never returns (--timeout 2)" 2 "its tkb_plugin_init was still running after" \
  env FAULT_INIT=hang "$TKBENCH" "${RUN[@]}" --filter ok_first --timeout 2
FAULT_INIT=print "$TKBENCH" "${RUN[@]}" --filter ok_first --format json >"$TMP/init_print.json" 2>"$CAP/err"
rc=$?
json_check "$TMP/init_print.json" "len(d['benchmarks']) == 1"
note init_print "a plugin's tkb_plugin_init prints to stdout (--format json)" $rc \
  "its text goes to stderr; stdout holds the JSON document" \
  "FAULT_INIT=print tkbench ${RUN[*]} --filter ok_first --format json"

# ---- output paths that are not regular files: written through, never replaced ----
if [ "$(id -u)" = 0 ] && mknod "$TMP/null" c 1 3 2>/dev/null; then
  expect 0 "" "$TKBENCH" "${RUN[@]}" "${OK[@]}" --out "$TMP/null"
  [ -c "$TMP/null" ] && pass || fail "--out replaced the device: $(ls -l "$TMP/null")"
  note out_device "--out names a character device (as root; DIR/null is mknod c 1 3, a /dev/null)" 0 \
    "written through: the device stays a device (report -o, merge -o and compare --out too)" \
    "tkbench ${RUN[*]} ${OK[*]} --out DIR/null"
  "$TKBENCH" "${RUN[@]}" "${OK[@]}" --out "$TMP/dev_src.json"
  expect 0 "" "$TKBENCH" report "$TMP/dev_src.json" -o "$TMP/null"
  expect 0 "" "$TKBENCH" merge "$TMP/dev_src.json" -o "$TMP/null"
  expect 0 "" "$TKBENCH" compare "$TMP/dev_src.json" "$TMP/dev_src.json" --out "$TMP/null"
  [ -c "$TMP/null" ] && pass || fail "report, merge or compare replaced the device: $(ls -l "$TMP/null")"
else
  skip_case out_device "making a device node needs root (mknod)"
fi
"$TKBENCH" "${RUN[@]}" "${OK[@]}" --out /dev/stdout >"$TMP/stdout.json" 2>"$CAP/err"
rc=$?
json_check "$TMP/stdout.json" "len(d['benchmarks']) == 2"
note out_stdout "--out /dev/stdout (Google Benchmark's --benchmark_out=/dev/stdout)" $rc \
  "the file goes to stdout, through the descriptor as the shell opened it" \
  "tkbench ${RUN[*]} ${OK[*]} --out /dev/stdout > x.json"
mkfifo "$TMP/out.fifo"
cat "$TMP/out.fifo" >"$TMP/fifo.json" &
reader=$!
expect 0 "" "$TKBENCH" "${RUN[@]}" "${OK[@]}" --out "$TMP/out.fifo"
wait $reader
[ -p "$TMP/out.fifo" ] && pass || fail "--out replaced the FIFO"
json_check "$TMP/fifo.json" "len(d['benchmarks']) == 2"
note out_fifo "--out names a FIFO a reader has open" 0 "written through: the reader gets the file, the FIFO stays" \
  "cat DIR/out.fifo > x.json & tkbench ${RUN[*]} ${OK[*]} --out DIR/out.fifo"
row out_fifo_alone "--out names a FIFO no process reads" 1 "it is a FIFO and no process opened it for reading within 10 s" \
  "$TKBENCH" "${RUN[@]}" "${OK[@]}" --out "$TMP/alone/out.fifo"
ln -s target.json "$TMP/link.json"
expect 0 "" "$TKBENCH" "${RUN[@]}" "${OK[@]}" --out "$TMP/link.json"
[ -L "$TMP/link.json" ] && [ -f "$TMP/target.json" ] && pass || fail "--out replaced the symlink: $(ls -l "$TMP")"
json_check "$TMP/target.json" "len(d['benchmarks']) == 2"
note out_symlink "--out names a symlink (DIR/link.json -> target.json)" 0 \
  "its target is written (atomically: a regular file); the link stays" \
  "tkbench ${RUN[*]} ${OK[*]} --out DIR/link.json"
row resume_stream "--resume of a stream" 2 "that is not a file (stdout, a device or a FIFO)" \
  "$TKBENCH" "${RUN[@]}" "${OK[@]}" --resume /dev/stdout

# ---- the journal: workers do not hold it; --resume keeps each entry once, or refuses ----
row stale_fd "an entry writes garbage through stale descriptors 3 to 255 (--out)" 0 "wrote $TMP/stale.json" \
  "$TKBENCH" "${HOSTILE[@]}" --filter '^fault_(ok_first|stale_fd|ok_last)_' --out "$TMP/stale.json"
json_check "$TMP/stale.json" "sorted(b['name'] for b in d['benchmarks'] if b['run_type'] == 'iteration') == ['fault_ok_first_forward_c', 'fault_ok_last_forward_c', 'fault_stale_fd_forward_c'] and not any(b.get('error_occurred') for b in d['benchmarks'])"
[ ! -e "$TMP/stale.json.partial.jsonl" ] && pass || fail "stale_fd: the journal was left"
# a journal with a garbage line, an entry's second line, and another run's lines appended
start_slow bad.json
kill -TERM $pid
wait $pid
J=$TMP/bad.json.partial.jsonl
line2=$(sed -n 2p "$J")
{ echo 'garbage {"not": json'; echo "$line2"
  sed -n 1p "$J" | sed 's/"settings_id": "[0-9a-f]*"/"settings_id": "00000000000000aa"/'
  echo "$line2" | sed 's/"settings_id": "[0-9a-f]*"/"settings_id": "00000000000000aa"/; s/ok_first/ok_last/g'
} >>"$J"
SHOW="(its journal: a garbage line, an entry's second line, another run's lines) tkbench ${RUN[*]} ${SLOW[*]} --resume DIR/bad.json" \
  row resume_bad_lines "--resume of a journal with lines it cannot use" 0 "line 3 is not JSON (an entry it held runs again): left out" \
  "$TKBENCH" "${RUN[@]}" "${SLOW[@]}" --resume "$TMP/bad.json"
grep -q "line 4 holds entry fault_ok_first_forward_c again (line 2 has it)" "$CAP/err" &&
  grep -q "line 6 is from a run with other settings" "$CAP/err" && pass || fail "resume_bad_lines: $(cat "$CAP/err")"
json_check "$TMP/bad.json" "[b['name'] for b in d['benchmarks'] if b['run_type'] == 'iteration'] == ['fault_ok_first_forward_c', 'fault_slow_forward_c', 'fault_ok_last_forward_c']"
# --resume refuses every setting that shapes the numbers, and another selection
start_slow other.json
kill -TERM $pid
wait $pid
row resume_threads "--resume with other threads" 2 "was written with --threads" \
  "$TKBENCH" "${RUN[@]}" "${SLOW[@]}" --threads 1 --resume "$TMP/other.json"
SHOW="OMP_NUM_THREADS=1 tkbench ${RUN[*]} ${SLOW[*]} --resume DIR/other.json" \
  row resume_omp "--resume under another OMP_NUM_THREADS" 2 "OMP_NUM_THREADS unset" \
  env OMP_NUM_THREADS=1 "$TKBENCH" "${RUN[@]}" "${SLOW[@]}" --resume "$TMP/other.json"
row resume_cold "--resume with --cold-cache" 2 "was written with --cold-cache off; this run has --cold-cache on" \
  "$TKBENCH" "${RUN[@]}" "${SLOW[@]}" --cold-cache --resume "$TMP/other.json"
row resume_warmup "--resume with another --warmup-ms" 2 "was written with --warmup-ms 0; this run has --warmup-ms 5" \
  "$TKBENCH" "${RUN[@]}" "${SLOW[@]}" --warmup-ms 5 --resume "$TMP/other.json"
if [ "$("$TKBENCH" info 2>/dev/null | grep -c 'avx')" -gt 0 ]; then
  SHOW="TKB_CPU_ISA=portable tkbench ${RUN[*]} ${SLOW[*]} --resume DIR/other.json" \
    row resume_isa "--resume on another cpu kernel path" 2 "this run has TKB_CPU_ISA=portable" \
    env TKB_CPU_ISA=portable "$TKBENCH" "${RUN[@]}" "${SLOW[@]}" --resume "$TMP/other.json"
else
  skip_case resume_isa "this CPU runs the portable kernels only"
fi
row resume_selection "--resume without the run's --load and selection" 2 "give the --load and selection flags it was started with" \
  "$TKBENCH" run --resume "$TMP/other.json"
# the journal damaged under a running run (its first line overwritten): the file cannot be
# written from it, and the message does not promise that --resume would
start_slow damaged.json
printf 'XXXXXXXXXXXXXXXX' | dd of="$TMP/damaged.json.partial.jsonl" conv=notrunc status=none
wait $pid
rc=$?
[ $rc -eq 1 ] && grep -q "the journal is kept as it is" "$CAP/err" && ! grep -q -- "--resume" "$CAP/err" && pass ||
  fail "damaged journal: exit $rc: $(cat "$CAP/err")"
note damaged "the journal's first line is overwritten while the run goes" $rc \
  "$(grep -h "the journal is kept as it is" "$CAP/err" | head -1 | sed "s#$TMP#DIR#g")" \
  "tkbench ${RUN[*]} ${SLOW[*]} --out DIR/damaged.json & (overwrite DIR/damaged.json.partial.jsonl's first bytes)"
# a second run on the --out of a live one is told to wait, not to --resume it
start_slow live.json
row live_out "a run on the --out of a run still going" 2 "is in use: another tkbench run is writing" \
  "$TKBENCH" "${RUN[@]}" "${SLOW[@]}" --out "$TMP/live.json"
kill -TERM $pid
wait $pid
rm -f "$TMP"/*.partial.jsonl

# ---- hostile results files for compare, merge and report ----
row read_zero "compare of /dev/zero" 2 "it is a character device, not a results file" \
  "$TKBENCH" compare /dev/zero "$TMP/good.json"
row read_fifo "compare of a FIFO no process writes to" 2 "it is a FIFO and no process wrote to it within 10 s" \
  "$TKBENCH" compare "$TMP/in.fifo" "$TMP/good.json"
# a pipe whose writer is slow (a run piped in writes its JSON at its end) is waited for
early_result read_slow && pass || fail "a slow pipe into compare: $(tail -3 "$CAP/err")"
printf '{"benchmarks": [{"name": "a", "real_time": NaN' >"$TMP/nan_end.json"
row read_nan_end "a file that ends right after NaN" 2 "holds NaN at line 1" \
  "$TKBENCH" compare "$TMP/nan_end.json" "$TMP/good.json"
printf '{"benchmarks": [%s, %s]}' '{"name": "BM_x_median", "run_type": "aggregate", "aggregate_name": "median", "real_time": 1}' \
  '{"name": "BM_x_median", "run_type": "aggregate", "aggregate_name": "median", "real_time": 2}' >"$TMP/twice.json"
row read_twice "a file with an aggregate twice (the reader's warning names the entry)" 0 'entry "BM_x" appears more than once' \
  "$TKBENCH" compare "$TMP/twice.json" "$TMP/twice.json"
printf '{"context": {"host_name": "h\xffst"}, "benchmarks": [{"name": "BM_\xc3", "run_type": "iteration", "real_time": 1, "time_unit": "ns"}]}' >"$TMP/latin1.json"
row merge_utf8 "merge of a file whose strings are not UTF-8" 0 "were not UTF-8; the merged file holds U+FFFD for them" \
  "$TKBENCH" merge "$TMP/latin1.json" -o "$TMP/merged_utf8.json"
python3 -c "import json, sys; json.loads(open(sys.argv[1], 'rb').read().decode('utf-8'))" "$TMP/merged_utf8.json" &&
  pass || fail "merge wrote bytes that are not UTF-8"
printf '{"benchmarks": [{"name": "BM_big", "run_type": "iteration", "real_time": 1e999, "time_unit": "ns"}]}' >"$TMP/inf.json"
row merge_inf "merge of a file with a number beyond a double's range (1e999)" 2 "real_time is Infinity; a comparison needs a finite time" \
  "$TKBENCH" merge "$TMP/inf.json" -o "$TMP/merged_inf.json"
[ ! -e "$TMP/merged_inf.json" ] && pass || fail "merge_inf: a file was written"
# outlier counts that are no int (1e300; missing, so NaN): the page counts them as 0
python3 - "$TMP" <<'PY'
import json, sys
d = json.load(open(sys.argv[1] + "/good.json"))
for b in d["benchmarks"]:
    st = b.get("tkbench", {}).get("statistics")
    if st:
        st["outliers_mild"] = 1e300
        st.pop("outliers_severe", None)
json.dump(d, open(sys.argv[1] + "/outliers.json", "w"))
PY
"$TKBENCH" report "$TMP/outliers.json" -o "$TMP/outliers.html" >"$CAP/out" 2>"$CAP/err"
rc=$?
[ $rc -eq 0 ] && grep -q "</html>" "$TMP/outliers.html" && pass || fail "report of outlier counts beyond int: exit $rc: $(cat "$CAP/err")"
note outliers "report of a file whose outlier counts are 1e300 or missing" $rc \
  "the page is written; such a count is shown as 0 (converting it to int was undefined)" \
  "tkbench report DIR/outliers.json -o DIR/outliers.html"
python3 - "$TMP" <<'PY'
import json, sys
tmp = sys.argv[1]
def doc(host, rows):
    return {"context": {"host_name": host}, "benchmarks": rows}
evil = "x`<img src=x onerror=alert(1)>`"
a = doc("<script>alert(2)</script>", [
    {"name": evil, "run_type": "iteration", "real_time": 1, "time_unit": "ns"},
    {"name": "y", "run_type": "iteration", "error_occurred": True,
     "error_message": "<script>alert(3)</script> [click](javascript:alert(4))"}])
b = doc("<b onmouseover=alert(5)>", [
    {"name": evil, "run_type": "iteration", "real_time": 2, "time_unit": "ns"},
    {"name": "y", "run_type": "iteration", "real_time": 2, "time_unit": "ns"}])
json.dump(a, open(f"{tmp}/evil_a.json", "w"))
json.dump(b, open(f"{tmp}/evil_b.json", "w"))
PY
row md_html "compare --format markdown of files holding HTML and links" 0 "tkbench compare" \
  "$TKBENCH" compare "$TMP/evil_a.json" "$TMP/evil_b.json" --format markdown
# rendered as Python-Markdown renders it, where installed; else the text itself
if /usr/bin/python3 -c 'import markdown' 2>/dev/null; then
  /usr/bin/python3 -c 'import markdown, sys; print(markdown.markdown(open(sys.argv[1]).read(), extensions=["tables"]))' \
    "$CAP/out" >"$TMP/md.html"
else
  cp "$CAP/out" "$TMP/md.html"
  echo "(python3-markdown not installed: the Markdown text is checked instead of its rendering)"
fi
# a tag or a link of the files' (their text, escaped, is harmless)
grep -qiE '<script|<img|<b |href="javascript:' "$TMP/md.html" &&
  fail "compare's Markdown put a file's HTML or link into the page: $(grep -iE '<script|<img|<b |javascript' "$TMP/md.html" | head -3)" || pass

# ---- exit codes and messages ----
row ab_missing "ab --a-cmd naming no program" 2 "--a-cmd ./missing: No such file or directory" \
  "$TKBENCH" ab --a-cmd ./missing --b-cmd ./missing
for cmd in compare report; do
  args=(compare "$TMP/good.json" "$TMP/good.json")
  [ $cmd = report ] && args=(report "$TMP/good.json")
  SHOW="tkbench ${args[*]} > /dev/full" \
    row "full_$cmd" "stdout is full ($cmd)" 1 "tkbench $cmd: cannot write to stdout: No space left on device" \
    bash -c '"$@" >/dev/full' _ "$TKBENCH" "${args[@]}"
done
SHOW="OMP_WAIT_POLICY=active OMP_NUM_THREADS=2 tkbench info --check" \
  row wait_active "info --check with OMP_WAIT_POLICY=active" 0 "export OMP_WAIT_POLICY=PASSIVE instead of the ACTIVE set now" \
  env OMP_WAIT_POLICY=active OMP_NUM_THREADS=2 "$TKBENCH" info --check
# the C API's argument check, tested by test_standardize: listed here with the rest
note value_tag "tkb_standardize_function given a tkb_value whose tag is 99 (C API; test_standardize)" "TKB_ERR_WRONG_KIND" \
  "argument 'x' of toy() has tag 99, which is no tkb_value tag (they are TKB_VALUE_UNSET (0) to TKB_VALUE_STRING (7)); build it with TKB_INT(), TKB_ABSTRACT() and the like" \
  "tkb_standardize_function(&toy_fn, &(tkb_value){.tag = 99}, 1, ...)"

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
