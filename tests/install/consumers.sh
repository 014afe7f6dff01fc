#!/usr/bin/env bash
# consumers.sh BUILD_DIR - installs BUILD_DIR into a scratch prefix and builds and runs,
# against that prefix alone, what a user of an installed tkbench would:
#   (a) examples/standardize_and_benchmark.c with pkg-config (libtkbench.so, and
#       libtkbench.a with `pkg-config --static`'s Libs.private),
#   (b) a CMake project with find_package(tkbench CONFIG): tkbench::tkbench and
#       tkbench::tkbench_static (cmake_consumer/),
#   (c) a C++17 program that includes tkbench.h and uses TKB_MAIN (tkb_main.cpp),
#   (d) examples/plugin.c, loaded by the installed `tkbench --load`;
# and checks that the installed tkbench and libtkbench.so find the OpenCL plugin (where
# the build's tkbench has an OpenCL device), that the man page and the bash completion
# work, that no installed file, RUNPATH or consumer command line names the source or
# build tree, that the install still works after it is moved, and that
# cmake/tkb_uninstall.cmake removes every file it installed.
#
# The consumers build with the source and build trees out of reach: the files they need
# are copied out first, then, in a private mount namespace (unshare, as root), an empty
# tmpfs is mounted over both trees. Where unshare cannot do that, the consumers run
# with the trees in place and the path checks alone guard against a leak (printed).
#
# It installs with `--component Unspecified` (every install rule), which writes
# BUILD_DIR/install_manifest_Unspecified.txt: install_manifest.txt, which `make
# uninstall` reads, stays the user's own.
#
#   consumers.sh --consume PREFIX WORK HAS_OPENCL FORBIDDEN...   (the inner half)
set -u

FAILED=0 PASSED=0
fail() { echo "FAIL: $*" >&2; FAILED=$((FAILED + 1)); }
pass() { PASSED=$((PASSED + 1)); }
finish() {
  echo "$PASSED passed, $FAILED failed"
  [ "$FAILED" -eq 0 ]
}

# run NAME CMD...: runs CMD with its output in $LOGS/NAME.log; fails (printing the
# log's end) when it exits non-zero. Returns CMD's status.
run() {
  local name=$1
  shift
  echo "+ $*" >"$LOGS/$name.log"
  "$@" >>"$LOGS/$name.log" 2>&1
  local rc=$?
  if [ "$rc" -ne 0 ]; then
    fail "$name: '$*' exited $rc"
    tail -n 15 "$LOGS/$name.log" | sed 's/^/      /' >&2
  else
    pass
  fi
  return "$rc"
}

# no_forbidden NAME FILE...: none of the files names a forbidden path.
no_forbidden() {
  local name=$1 f hit=0
  shift
  for f in "${FORBIDDEN[@]}"; do
    if grep -rlF -- "$f" "$@" >"$LOGS/forbidden" 2>/dev/null; then
      fail "$name names $f: $(tr '\n' ' ' <"$LOGS/forbidden")"
      hit=1
    fi
  done
  [ "$hit" = 0 ] && pass
}

# The 4 lines standardize_and_benchmark.c prints, one per mode.
sab_ok() {
  local n
  n=$(grep -cE '^normalization +(forward|forward_res|vjp|forward_and_vjp) +median +[0-9]+\.[0-9]+ ms' "$1")
  [ "$n" = 4 ] && pass || fail "$1: $n of the 4 modes' lines: $(cat "$1")"
}

# json_ok FILE ENTRY: a run's JSON file holds ENTRY, timed, without an error.
json_ok() {
  if python3 - "$1" "$2" <<'PY'; then pass; else fail "$1: no timed entry $2"; fi
import json, sys
d = json.load(open(sys.argv[1]))
b = [x for x in d["benchmarks"] if x["run_name"] == sys.argv[2]]
sys.exit(0 if b and all(x["real_time"] > 0 and not x.get("error_occurred") for x in b) else 1)
PY
}

# has_opencl TKBENCH_OR_PROGRAM: its `info` shows an opencl:0 with timing methods.
has_opencl() {
  "$1" info 2>/dev/null | grep -A1 '^  opencl:0 ' | grep -q 'methods:'
}

# ---------------------------------------------------------------- the inner half
consume() {
  P=$1 WORK=$2 HAS_OPENCL=$3
  shift 3
  FORBIDDEN=("$@")
  LOGS=$WORK/logs
  mkdir -p "$LOGS"
  local f
  for f in "${FORBIDDEN[@]}"; do
    [ -e "$f/CMakeLists.txt" ] || [ -e "$f/CMakeCache.txt" ] && echo "NOTE: $f is in reach"
  done
  # only the install: nothing from the caller's environment points anywhere else
  unset TKB_PLUGIN_PATH LD_LIBRARY_PATH CMAKE_PREFIX_PATH CPATH C_INCLUDE_PATH LIBRARY_PATH
  local pc
  pc=$(find "$P" -name tkbench.pc)
  export PKG_CONFIG_PATH=${pc%/tkbench.pc}
  local libdir cflags libs static_libs
  libdir=$(pkg-config --variable=libdir tkbench)
  cflags=$(pkg-config --cflags tkbench) libs=$(pkg-config --libs tkbench)
  static_libs=$(pkg-config --static --libs tkbench)
  [[ $(realpath "$libdir") == "$(realpath "$P")"/* ]] && [ -f "$libdir/libtkbench.so" ] \
    && pass || fail "pkg-config's libdir $libdir is not in the install $P"
  echo "pkg-config: $cflags $libs | static: $static_libs" >"$LOGS/pkg-config.log"
  no_forbidden "pkg-config's flags" "$LOGS/pkg-config.log"

  # the installed files: no path into the trees, in text or binaries (RUNPATHs
  # included); tkbench and libtkbench.so have no RUNPATH at all (the CUDA plugin keeps
  # the toolkit's)
  no_forbidden "the installed files" "$P"
  local elf
  for elf in "$P/bin/tkbench" "$libdir"/libtkbench.so.*.*; do
    if readelf -d "$elf" 2>/dev/null | grep -E 'R(UN)?PATH' >"$LOGS/rpath"; then
      fail "$elf has an RPATH/RUNPATH: $(cat "$LOGS/rpath")"
    else
      pass
    fi
  done
  # the shared library's SONAME is the ABI number, its file the version
  readelf -d "$libdir/libtkbench.so" | grep -qE 'SONAME.*\[libtkbench\.so\.[0-9]+\]' \
    && pass || fail "libtkbench.so has no versioned SONAME"

  cd "$WORK" || return
  # (a) pkg-config: shared, then static through Libs.private
  run a_build cc -std=c11 -Wall -Wextra -Werror src/standardize_and_benchmark.c $cflags $libs \
    -Wl,-rpath,"$libdir" -o a_shared &&
    run a_run ./a_shared && sab_ok "$LOGS/a_run.log"
  readelf -d a_shared 2>/dev/null | grep -q 'NEEDED.*libtkbench\.so' && pass || fail "a_shared does not link libtkbench.so"
  run a_static_build cc -std=c11 -Wall -Wextra -Werror src/standardize_and_benchmark.c $cflags \
    ${static_libs/-ltkbench/$libdir/libtkbench.a} -o a_static &&
    run a_static_run ./a_static && sab_ok "$LOGS/a_static_run.log"
  readelf -d a_static 2>/dev/null | grep -q 'NEEDED.*libtkbench' && fail "a_static links libtkbench.so" || pass

  # (b) CMake: find_package(tkbench CONFIG) and both targets
  mkdir -p cmake_consumer
  cp src/standardize_and_benchmark.c cmake_consumer/main.c
  cp src/cmake_consumer/CMakeLists.txt cmake_consumer/
  if run b_configure cmake -S cmake_consumer -B cmake_build -DCMAKE_PREFIX_PATH="$P" \
       -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF \
       -DCMAKE_BUILD_TYPE=Release &&
     run b_build cmake --build cmake_build; then
    grep -q "^tkbench_DIR:PATH=$P/" cmake_build/CMakeCache.txt && pass \
      || fail "find_package found $(grep '^tkbench_DIR' cmake_build/CMakeCache.txt), not the install $P"
    no_forbidden "the CMake consumer's compile and link commands" cmake_build/compile_commands.json \
      cmake_build/CMakeFiles/with_shared.dir/link.txt cmake_build/CMakeFiles/with_static.dir/link.txt
    run b_run_shared cmake_build/with_shared && sab_ok "$LOGS/b_run_shared.log"
    run b_run_static cmake_build/with_static && sab_ok "$LOGS/b_run_static.log"
    readelf -d cmake_build/with_static | grep -q 'NEEDED.*libtkbench' && fail "with_static links libtkbench.so" || pass
  fi

  # (c) C++17: tkbench.h and TKB_MAIN
  if run c_build g++ -std=c++17 -Wall -Wextra -Wpedantic -Werror src/tkb_main.cpp $cflags $libs \
       -Wl,-rpath,"$libdir" -o c_tkb_main; then
    run c_list ./c_tkb_main list && grep -q '^twice_4k_forward_cxx ' "$LOGS/c_list.log" && pass \
      || fail "the C++ program does not list its entry: $(cat "$LOGS/c_list.log")"
    run c_run ./c_tkb_main run --iterations 2 --experiments 1 --out c.json && json_ok c.json twice_4k_forward_cxx
    if [ "$HAS_OPENCL" = 1 ]; then # libtkbench.so finds <libdir>/tkbench/ from its own folder
      has_opencl ./c_tkb_main && pass || fail "libtkbench.so does not find the OpenCL plugin: $(./c_tkb_main info 2>&1 | grep opencl)"
    fi
  fi

  # (d) a plugin for the installed tkbench
  local tkbench=$P/bin/tkbench
  if run d_build cc -std=c11 -Wall -Wextra -Werror -shared -fPIC $cflags src/plugin.c -o relu_plugin.so; then
    run d_list "$tkbench" list --load ./relu_plugin.so --filter '^relu_' &&
      { [ "$(grep -c '^relu_' "$LOGS/d_list.log")" = 4 ] && pass || fail "tkbench --load lists: $(cat "$LOGS/d_list.log")"; }
    run d_run "$tkbench" run --load ./relu_plugin.so --filter '^relu_256x256_forward_c$' --iterations 2 \
      --experiments 1 --out d.json && json_ok d.json relu_256x256_forward_c
  fi

  # the installed tkbench finds its plugins with no TKB_PLUGIN_PATH
  run info "$tkbench" info
  if [ "$HAS_OPENCL" = 1 ]; then
    has_opencl "$tkbench" && pass || fail "the installed tkbench does not find the OpenCL plugin: $(grep opencl "$LOGS/info.log")"
  fi
  if ls "$libdir"/tkbench/libtkbench-cuda.so >/dev/null 2>&1; then
    grep -q 'has no CUDA backend' "$LOGS/info.log" && fail "the installed tkbench does not find the CUDA plugin" || pass
  fi

  # the man page renders without warnings and documents every command; bash completes
  local man
  man=$(find "$P" -name tkbench.1)
  if [ -n "$man" ]; then
    if command -v groff >/dev/null; then
      groff -man -ww -z "$man" 2>"$LOGS/groff" && [ ! -s "$LOGS/groff" ] && pass || fail "groff warns on $man: $(cat "$LOGS/groff")"
    fi
    local cmd
    for cmd in list run check info help version; do
      grep -q "^\.SS $cmd\$" "$man" && pass || fail "the man page has no section for $cmd"
    done
  else
    fail "no tkbench.1 installed"
  fi
  local completion
  completion=$(find "$P" -path '*bash-completion/completions/tkbench')
  if [ -n "$completion" ]; then
    PATH="$P/bin:$PATH" bash -c '. "$1"; COMP_WORDS=(tkbench ru); COMP_CWORD=1; _tkbench; echo "${COMPREPLY[*]}"
      COMP_WORDS=(tkbench list --load ./relu_plugin.so --filter relu_256); COMP_CWORD=5; _tkbench; echo "${COMPREPLY[*]}"' \
      _ "$completion" >"$LOGS/completion.log" 2>&1
    grep -qx 'run' "$LOGS/completion.log" && grep -q 'relu_256x256_forward_c' "$LOGS/completion.log" \
      && pass || fail "bash completion: $(cat "$LOGS/completion.log")"
  else
    fail "no bash completion installed"
  fi

  # moved: a relocatable install works from anywhere
  mv "$P" "$P.moved"
  PKG_CONFIG_PATH=${PKG_CONFIG_PATH/"$P"/"$P.moved"}
  local mlibdir
  mlibdir=$(pkg-config --variable=libdir tkbench)
  run moved_build cc -std=c11 src/standardize_and_benchmark.c $(pkg-config --cflags --libs tkbench) \
    -Wl,-rpath,"$mlibdir" -o a_moved && run moved_run ./a_moved && sab_ok "$LOGS/moved_run.log"
  if [ "$HAS_OPENCL" = 1 ]; then
    has_opencl "$P.moved/bin/tkbench" && pass || fail "the moved tkbench does not find the OpenCL plugin"
  fi
  mv "$P.moved" "$P"
  finish
}

if [ "${1:-}" = --consume ]; then
  shift
  consume "$@"
  exit
fi

# ---------------------------------------------------------------- the outer half
[ $# -eq 1 ] || { echo "usage: $0 BUILD_DIR" >&2; exit 2; }
BUILD=$(realpath "$1")
SRC=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$(mktemp -d /tmp/tkb_install_XXXXXX)
trap 'rm -rf "$WORK"' EXIT
P=$WORK/prefix LOGS=$WORK/logs
mkdir -p "$LOGS" "$WORK/src/cmake_consumer"
for tool in cc g++ pkg-config readelf python3; do
  command -v "$tool" >/dev/null || { echo "SKIPPED: $tool is not installed (scripts/bootstrap.sh installs it)"; exit 77; }
done

run install cmake --install "$BUILD" --prefix "$P" --component Unspecified || { finish; exit; }
cp "$SRC/examples/standardize_and_benchmark.c" "$SRC/examples/plugin.c" "$SRC/tests/install/tkb_main.cpp" \
  "$0" "$WORK/src/"
cp "$SRC/tests/install/cmake_consumer/CMakeLists.txt" "$WORK/src/cmake_consumer/"
HAS_OPENCL=0
has_opencl "$BUILD/tkbench" && HAS_OPENCL=1
echo "installed into $P; OpenCL device here: $HAS_OPENCL"

# the trees out of reach: an empty tmpfs over each, in a mount namespace of its own
hide=""
case $BUILD/ in "$SRC"/*) ;; *) hide="mount -t tmpfs tkb-hidden '$BUILD' && " ;; esac
inner=(bash "$WORK/src/consumers.sh" --consume "$P" "$WORK" "$HAS_OPENCL" "$SRC" "$BUILD")
if unshare --mount sh -c "mount -t tmpfs tkb-hidden '$SRC' && $hide [ ! -e '$SRC/CMakeLists.txt' ]" 2>/dev/null; then
  echo "the source tree ($SRC) and build tree ($BUILD) are hidden from the consumers"
  unshare --mount sh -c "mount -t tmpfs tkb-hidden '$SRC' && $hide exec \"\$@\"" sh "${inner[@]}"
else
  echo "NOTE: cannot hide the source and build trees here (unshare --mount needs root); the consumers"
  echo "      run with them in place and the path checks alone guard against a leak"
  "${inner[@]}"
fi
inner_rc=$?
[ "$inner_rc" -eq 0 ] && pass || fail "the consumers failed (above)"

# uninstall: every file the install wrote is gone
manifest=$BUILD/install_manifest_Unspecified.txt
if run uninstall cmake -DMANIFEST="$manifest" -P "$SRC/cmake/tkb_uninstall.cmake"; then
  left=$(find "$P" ! -type d)
  [ -z "$left" ] && pass || fail "left after uninstall: $left"
  left=$(find "$P" -type d -name tkbench)
  [ -z "$left" ] && pass || fail "uninstall left tkbench's own folders: $left"
fi
finish
