#!/usr/bin/env bash
# sass-stats.sh FILE.cu [KERNEL_REGEX] [TOP] - the SASS of a CUDA source, without a GPU:
# compiles FILE.cu as the backend does (sm_90, -O3, -fmad=false, the backend's include
# paths) to a cubin, disassembles it, and prints for each kernel whose mangled name
# matches KERNEL_REGEX (default: all) its instruction count and its TOP (default 12)
# opcodes. For comparing two versions of a kernel (a kernel that is issue-bound runs at
# about the speed of its instruction count), e.g.
#   scripts/sass-stats.sh src/backend/cuda/fill.cu 'tkb_fillILi0ELi10E'
# cuobjdump and nvdisasm are not in every CUDA install (not in this project's machines'):
# without them on PATH, the NVIDIA wheels nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm
# are downloaded from PyPI (by name, once) into .sasstools/ (git-ignored).
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SRC=${1:?usage: sass-stats.sh FILE.cu [KERNEL_REGEX] [TOP]}
PATTERN=${2:-.}
TOP=${3:-12}
if ! command -v cuobjdump >/dev/null || ! command -v nvdisasm >/dev/null; then
  TOOLS="$ROOT/.sasstools"
  if [ ! -x "$TOOLS/nvidia/cu13/bin/nvdisasm" ]; then
    mkdir -p "$TOOLS/wheels"
    python3 -m pip download --quiet --no-deps -d "$TOOLS/wheels" nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm
    for w in "$TOOLS"/wheels/*.whl; do python3 -m zipfile -e "$w" "$TOOLS"; done
    chmod +x "$TOOLS"/nvidia/*/bin/*
  fi
  PATH="$(dirname "$(ls "$TOOLS"/nvidia/*/bin/nvdisasm | head -n 1)"):$PATH"
fi
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
"$NVCC" -std=c++17 -O3 -arch=sm_90 -fmad=false -I"$ROOT/include" -I"$ROOT/src/core" \
  -I"$ROOT/src/backend/cuda" -I"$ROOT/ops" -cubin -o "$WORK/k.cubin" "$SRC"
cuobjdump -sass "$WORK/k.cubin" >"$WORK/k.sass"
# kernels: "Function : NAME" starts one; instructions: "/*0a30*/  [@P0] OPCODE ..."
awk -v pat="$PATTERN" -v top="$TOP" '
  function flush(   n, i, j, t, ops, cnt) {
    if (name == "") return
    n = 0
    for (op in hist) { n++; ops[n] = op; cnt[n] = hist[op] }
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
      if (cnt[j] > cnt[i]) { t = cnt[i]; cnt[i] = cnt[j]; cnt[j] = t; t = ops[i]; ops[i] = ops[j]; ops[j] = t }
    printf "%s: %d instructions\n ", name, total
    for (i = 1; i <= n && i <= top; i++) printf " %s %d", ops[i], cnt[i]
    printf "\n"
    delete hist; total = 0; name = ""
  }
  /Function : / { flush(); name = ($3 ~ pat) ? $3 : ""; next }
  name != "" && /^[ \t]+\/\*[0-9a-f][0-9a-f][0-9a-f][0-9a-f]+\*\// {
    line = $0
    sub(/^[ \t]+\/\*[0-9a-f]+\*\/[ \t]+/, "", line)
    sub(/^@!?U?P[0-9T]+[ \t]+/, "", line)
    split(line, f, /[ \t;]+/)
    op = f[1]; sub(/\..*/, "", op)
    hist[op]++; total++
  }
  END { flush() }' "$WORK/k.sass"
