#!/usr/bin/env bash
# screenshot.sh PAGE.html OUT.png [WIDTH,HEIGHT] [FRAGMENT] - renders a page in headless
# Chromium (Debian's chromium; scripts/bootstrap.sh test installs it) and writes a PNG of
# its top; FRAGMENT is the URL's part after '#' (a report's "filter=REGEX").
# The report's browser test and the screenshot in docs/ are made by this one command.
set -euo pipefail
page=$(realpath "$1") out=$(realpath -m "$2") size=${3:-1280,1600} fragment=${4:+#$4}
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || { echo "screenshot.sh: chromium is not installed (scripts/bootstrap.sh test installs it)" >&2; exit 77; }
profile=$(mktemp -d /tmp/tkb_chromium_XXXXXX)
trap 'rm -rf "$profile"' EXIT
# --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
"$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$profile" \
  --window-size="$size" --screenshot="$out" "file://$page$fragment" >/dev/null 2>&1
[ -s "$out" ] || { echo "screenshot.sh: chromium wrote no screenshot of $page" >&2; exit 1; }
