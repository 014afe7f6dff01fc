# bash completion for tkbench (installed as <datadir>/bash-completion/completions/tkbench).
#
# Everything is asked of the tkbench being completed, when TAB is pressed, so it never
# goes stale: the commands from `tkbench help`, a command's flags from `tkbench help CMD`,
# the choices a flag's help lists ("console, json, csv or markdown"), entry names, ops,
# implementations, modes and tags from `tkbench list` (with the line's --load plugins),
# devices and timing methods from `tkbench info`, a command's subcommands from its usage
# line (`tkbench history list|show|...`). Files for --load, --out, --trace-dir and the
# subcommands whose help says they take files (`history import FILE...`). A TKB_MAIN program takes the same command line: `complete -F _tkbench
# my_bench` after sourcing this file completes it too.

# The flags of a command, one per line: "--name" or "--name METAVAR" ("--name=METAVAR").
_tkbench_flags() {
  "$1" help "$2" 2>/dev/null | awk '/^  -/ { sub(/^  /, ""); sub(/  .*/, ""); print }'
}

# The choices a flag's help lists as "a, b, c or d", one per line.
_tkbench_flag_choices() {
  "$1" help "$2" 2>/dev/null | awk -v flag="$3" '
    /^  -/ { name = $1; sub(/=.*/, "", name); on = (name == flag); if (on) text = $0; next }
    on && /^   / { text = text " " $0; next }
    { on = 0 }
    END {
      gsub(/[ ]+/, " ", text)
      if (match(text, /[a-z_0-9]+(, [a-z_0-9]+)+,? or [a-z_0-9]+/)) {
        s = substr(text, RSTART, RLENGTH)
        gsub(/,? or /, ", ", s)
        n = split(s, w, ", ")
        for (i = 1; i <= n; i++) print w[i]
      }
    }'
}

# The subcommands a command's usage line names ("Usage: tkbench history
# list|show|export|prune|import [flags]"), one per line; none for most commands.
_tkbench_subcommands() {
  "$1" help "$2" 2>/dev/null | awk -v c="$2" '
    NR == 1 {
      for (i = 1; i < NF; i++)
        if ($i == c && $(i + 1) ~ /^[a-z]+(\|[a-z]+)+$/) { n = split($(i + 1), s, "|"); for (k = 1; k <= n; k++) print s[k] }
      exit
    }'
}

# `tkbench list`'s column COL (1 name, 2 op, 3 impl, 4 mode, 5 tags), with the plugins
# the line loads. A name too long for its column is alone on its line, the rest of its
# row on the next.
_tkbench_list_column() {
  local prog=$1 col=$2
  shift 2
  "$prog" list "$@" 2>/dev/null | awk -v c="$col" '
    NR == 1 || /^[0-9]+ entr(y|ies)$/ { next }
    /^[^ ]/ && NF == 1 { name = $1; next }
    /^[^ ]/ { name = $1; $1 = "" }
    NF < 3 { next }
    {
      $0 = name " " $0
      if (c == 5) { n = split($5, t, ","); for (i = 1; i <= n; i++) if (t[i] != "-") print t[i] }
      else print $c
    }' | sort -u
}

_tkbench() {
  # COMP_WORDS splits "--out=x" and "opencl:0" at '=' and ':' (COMP_WORDBREAKS): joined
  # back here, and the replies cut back to the part after the last '=' or ':' at the end.
  local words=() cword=-1 i w
  for ((i = 0; i <= COMP_CWORD; i++)); do
    w=${COMP_WORDS[i]}
    if [ ${#words[@]} -gt 0 ] && { [[ $w == [=:] ]] || [[ ${words[-1]} == *[=:] ]]; }; then
      words[-1]+=$w
    else
      words+=("$w")
    fi
  done
  cword=$((${#words[@]} - 1))
  local cur=${words[cword]} prev=${words[cword - 1]:-}
  local prog=${words[0]} cmd="" loads=() plain=() # plain: the words after cmd that are no flag
  for ((i = 1; i < cword; i++)); do
    case ${words[i]} in
      --load) loads+=(--load "${words[i + 1]}") ;;
      --load=*) loads+=("${words[i]}") ;;
      -*) ;;
      *)
        if [ -z "$cmd" ] && [ "${words[i - 1]}" != --load ]; then cmd=${words[i]}; else plain+=("${words[i]}"); fi ;;
    esac
  done
  COMPREPLY=()
  _tkbench_reply "$prog" "$cmd" "$cur" "$prev" "${loads[@]}"
  local cut=${cur%"${cur##*[=:]}"}
  if [ -n "$cut" ] && [ ${#COMPREPLY[@]} -gt 0 ]; then
    COMPREPLY=("${COMPREPLY[@]#"$cut"}")
  fi
  # a flag spelled with '=' takes its value without a space
  if [ ${#COMPREPLY[@]} -eq 1 ] && [[ ${COMPREPLY[0]} == *= ]]; then
    compopt -o nospace 2>/dev/null
  fi
  return 0
}

# COMPREPLY for the word cur (whole, '=' and ':' included) of a line whose command is cmd.
_tkbench_reply() {
  local prog=$1 cmd=$2 cur=$3 prev=$4
  shift 4
  local loads=("$@")
  # flag=value: the value part
  local flag=$prev value=$cur eq=""
  if [[ $cur == --*=* ]]; then
    flag=${cur%%=*} value=${cur#*=} eq="$flag="
  fi

  if [ -z "$cmd" ] && [[ $cur != --benchmark_* ]] && [ -z "$eq" ]; then
    local cmds
    cmds=$("$prog" help 2>/dev/null | awk '/^Commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { exit }')
    COMPREPLY=($(compgen -W "$cmds -h --help --version" -- "$cur"))
    return
  fi
  [ -z "$cmd" ] && cmd=run # Google Benchmark flags alone mean `run`
  if [ "$cmd" = help ]; then
    COMPREPLY=($(compgen -W "$("$prog" help 2>/dev/null | awk '/^Commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { exit }')" -- "$cur"))
    return
  fi

  # the value of a flag that takes one
  local flags takes
  flags=$(_tkbench_flags "$prog" "$cmd")
  takes=$(awk -v f="$flag" '{ n = $1; sub(/=.*/, "", n) } n == f && ($2 != "" || $1 ~ /=/) { print "yes" }' <<<"$flags")
  if [ -n "$takes" ] && { [ -n "$eq" ] || [[ $cur != -* ]]; }; then
    local choices=""
    case $flag in
      --load | --out | --benchmark_out) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "$value")) ;;
      --trace-dir) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- "$value")) ;;
      --filter | --benchmark_filter) choices=$(_tkbench_list_column "$prog" 1 "${loads[@]}") ;;
      --op) choices=$(_tkbench_list_column "$prog" 2 "${loads[@]}") ;;
      --impl) choices=$(_tkbench_list_column "$prog" 3 "${loads[@]}") ;;
      --tag) choices=$(_tkbench_list_column "$prog" 5 "${loads[@]}") ;;
      --device) choices=$("$prog" info 2>/dev/null | awk '/^  (cpu|[a-z]+:[0-9]+) / { print $1 }') ;;
      --method) choices="auto $("$prog" info 2>/dev/null | awk '/methods:/ { sub(/.*methods: /, ""); gsub(/ \([a-z]+\)/, ""); gsub(/,/, " "); print }' | tr ' ' '\n' | sort -u)" ;;
      *) choices=$(_tkbench_flag_choices "$prog" "$cmd" "$flag") ;;
    esac
    [ -n "$choices" ] && COMPREPLY=($(compgen -W "$choices" -- "$value"))
    if [ -n "$eq" ] && [ ${#COMPREPLY[@]} -gt 0 ]; then
      COMPREPLY=("${COMPREPLY[@]/#/$eq}")
    fi
    return
  fi

  # a plain word of a command with subcommands (history list|show|...): the subcommand,
  # then files where its help says it takes them ("import FILE...")
  if [[ $cur != -* ]]; then
    local subs sub="" w
    subs=$(_tkbench_subcommands "$prog" "$cmd")
    if [ -n "$subs" ]; then
      for w in "${plain[@]}"; do
        if grep -qx -- "$w" <<<"$subs"; then sub=$w; break; fi
      done
      if [ -z "$sub" ]; then
        COMPREPLY=($(compgen -W "$subs" -- "$cur"))
      elif "$prog" help "$cmd" 2>/dev/null | grep -q -- "$sub FILE"; then
        compopt -o filenames 2>/dev/null
        COMPREPLY=($(compgen -f -- "$cur"))
      fi
      return
    fi
  fi

  # a flag
  local names
  names=$(awk '{ n = $1; if (n ~ /=/) { sub(/=.*/, "=", n) } print n }' <<<"$flags")
  COMPREPLY=($(compgen -W "$names -h --help" -- "$cur"))
}
complete -F _tkbench tkbench
