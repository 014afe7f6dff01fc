#!/usr/bin/env bash
# gpu-deps.sh - run on the development machine (Debian 12, x86-64) before a device call:
# downloads the Debian packages of OpenBLAS and cJSON (and OpenBLAS's Fortran runtime)
# into .gpudeps/ (git-ignored), because the GPU machine's image has neither library and
# reaches no package registry. Pass `carry: [".gpudeps"]` to the device tool;
# scripts/gpu-check.sh unpacks them into a private prefix there. About 13 MB.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$ROOT/.gpudeps"
cd "$ROOT/.gpudeps"
PKGS="libopenblas0-pthread libopenblas-pthread-dev libopenblas-dev libopenblas0 libcjson1
  libcjson-dev libgfortran5 libquadmath0"
# a fresh machine may have no package lists yet: update once, then try again
# shellcheck disable=SC2086
apt-get download $PKGS || { apt-get update -qq && apt-get download $PKGS; }
ls -l "$ROOT/.gpudeps"
