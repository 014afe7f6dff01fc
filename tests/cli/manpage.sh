# manpage.sh - the man page (`tkbench help --man`, installed as tkbench.1) is the help's
# own text: with its roff taken out and spaces collapsed, it holds the overview's
# description and, for every command, a section whose text is `tkbench help CMD` word
# for word (after the usage line); and groff renders it without warnings.
. "$(dirname "$0")/lib.bash"

expect 0 '.TH TKBENCH 1' "$TKBENCH" help --man
MAN=$TMP/tkbench.1
cp "$CAP/out" "$MAN"

if command -v groff >/dev/null; then
  groff -man -ww -z "$MAN" 2>"$CAP/groff"
  [ ! -s "$CAP/groff" ] && pass || fail "groff warns: $(cat "$CAP/groff")"
fi

# text without layout: one line, runs of spaces as one
flat() { tr '\n' ' ' | tr -s ' ' | sed 's/^ //; s/ $//'; }
# the text of roff on stdin (or files): the arguments of the macros that set text (.B,
# .I, .SS) kept, other requests dropped, fonts and escapes undone
text() {
  awk '/^\.(B|I|SS) / { sub(/^\.[A-Z]+ /, ""); print; next } /^\./ { next } { print }' "$@" |
    sed -e 's/\\f[BIR]//g' -e 's/\\-/-/g' -e 's/\\&//g' -e 's/\\e/\\/g' | flat
}
text "$MAN" >"$TMP/man.txt"

"$TKBENCH" help | sed -n '2,/^$/p' | flat >"$TMP/want"
grep -qF -- "$(cat "$TMP/want")" "$TMP/man.txt" && pass || fail "the man page lacks the description: $(cat "$TMP/want")"
commands=$("$TKBENCH" help | awk '/^Commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { exit }')
[ "$(wc -w <<<"$commands")" -ge 6 ] && pass || fail "the overview lists too few commands: $commands"
for cmd in $commands; do
  grep -qx "\.SS $cmd" "$MAN" && pass || fail "no section for $cmd"
  "$TKBENCH" help "$cmd" | sed 1d | flat >"$TMP/want"
  if grep -qF -- "$(cat "$TMP/want")" "$TMP/man.txt"; then
    pass
  else
    fail "the man page's $cmd section is not 'tkbench help $cmd':"
    diff <(tr ' ' '\n' <"$TMP/want") <(sed -n "/^\.SS $cmd\$/,/^\.S[SH] /p" "$MAN" | text | tr ' ' '\n') |
      head -n 20 >&2
  fi
done
finish
