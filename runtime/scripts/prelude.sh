# pulse prelude: the first part of every node script. pulse sends prelude + `export NAME='value'` inputs + one
# step body to `bash -s` on stdin, so the node's login shell never parses any of it.
#
# Stable helpers (status.sh, smoke.sh and gpu-probe.sh use them too):
#   pulse_record KIND key=value key:=json ...   one `@pulse {"kind":KIND,...}` line on stdout. `key=value` is a
#                                               JSON string; `key:=v` is a number/true/false/null (anything else
#                                               is quoted as a string). Values are JSON-escaped; never pass secrets.
#   pulse_json_str VALUE                        prints VALUE as a JSON string literal (no newline).
#   pulse_fail CODE MESSAGE                     emits an `error` record, prints MESSAGE to stderr, exits CODE.
#   pulse_env_get KEY FILE                      prints the value of KEY in a .env WITHOUT executing the file
#                                               (parsed by awk in an empty environment); exit 1 when absent.
#   pulse_env_keys FILE                         prints each assignment key of a .env, one per line.
#   pulse_env_norm VALUE                        prints VALUE with white space runs collapsed to one space, trimmed.
#   pulse_abs PATH                              PATH, or $PULSE_RECIPE_DIR/PATH when PATH is relative.
#   pulse_ctime PATH                            newest ctime (epoch s, fractional) of PATH or the files under it.
#   pulse_api_key FILE                          the API_KEY of a .env into the variable PULSE_API_KEY_VALUE (never
#                                               printed); empty when unset.
#   pulse_curl_auth ARGS...                     curl ARGS with `Authorization: Bearer $PULSE_API_KEY_VALUE` sent on
#                                               stdin (-H @-), so the key is never on a command line.
# Exit codes (runtime/node/types.ts SCRIPT_EXIT): 0 ok, 10 refused, 11 precondition failed, 12 temporary,
# 13 not ready. Anything else is a script failure.
set -euo pipefail
umask 077
export LC_ALL=C
readonly PULSE_EXIT_OK=0 PULSE_EXIT_REFUSED=10 PULSE_EXIT_PRECONDITION=11 PULSE_EXIT_TEMPORARY=12 PULSE_EXIT_NOT_READY=13

pulse_json_str() {
  local s=$1
  s=${s//\\/\\\\}
  s=${s//\"/\\\"}
  s=${s//$'\n'/\\n}
  s=${s//$'\r'/\\r}
  s=${s//$'\t'/\\t}
  s=${s//[$'\001'-$'\037']/}
  printf '"%s"' "$s"
}

pulse_record() {
  local kind=$1 out arg key val
  shift
  out="{\"kind\":$(pulse_json_str "$kind")"
  for arg in "$@"; do
    key=${arg%%=*}
    val=${arg#*=}
    if [[ $key == *: ]]; then
      key=${key%:}
      if [[ ! $val =~ ^(-?[0-9]+(\.[0-9]+)?|true|false|null)$ ]]; then val=$(pulse_json_str "$val"); fi
    else
      val=$(pulse_json_str "$val")
    fi
    out+=",$(pulse_json_str "$key"):$val"
  done
  printf '@pulse %s}\n' "$out"
}

pulse_fail() {
  local code=$1
  shift
  pulse_record error message="$*"
  printf 'pulse: %s\n' "$*" >&2
  exit "$code"
}

_PULSE_AWK=$(command -v awk)
# The .env parser: KEY=value, KEY="value" and KEY='value' (quoted values may span lines), optional `export `.
# It only reads: nothing in the file is expanded or executed. mode=keys lists keys; mode=get prints one value
# followed by `x` (so trailing newlines survive command substitution; pulse_env_get strips it).
_PULSE_ENV_AWK='
function emit(k, v) { if (mode == "keys") print k; else if (k == want) { val = v; found = 1 } }
{
  line = $0
  if (inq != "") {
    i = index(line, inq)
    if (i == 0) { buf = buf "\n" line; next }
    buf = buf "\n" substr(line, 1, i - 1); emit(key, buf); inq = ""; next
  }
  sub(/^[ \t]+/, "", line)
  if (line == "" || substr(line, 1, 1) == "#") next
  sub(/^export[ \t]+/, "", line)
  if (!match(line, /^[A-Za-z_][A-Za-z0-9_]*=/)) next
  key = substr(line, 1, RLENGTH - 1); rest = substr(line, RLENGTH + 1)
  q = substr(rest, 1, 1)
  if (q == "\"" || q == "\047") {
    rest = substr(rest, 2); i = index(rest, q)
    if (i == 0) { inq = q; buf = rest; next }
    emit(key, substr(rest, 1, i - 1)); next
  }
  sub(/[ \t]+#.*$/, "", rest); sub(/[ \t]+$/, "", rest)
  emit(key, rest)
}
END { if (mode == "get") { if (!found) exit 1; printf "%sx", val } }'

pulse_env_keys() {
  env -i "$_PULSE_AWK" -v mode=keys -v want= "$_PULSE_ENV_AWK" "$1"
}

pulse_env_get() {
  local out
  out=$(env -i "$_PULSE_AWK" -v mode=get -v want="$1" "$_PULSE_ENV_AWK" "$2") || return 1
  printf '%s' "${out%x}"
}

pulse_env_norm() {
  local -a words=()
  read -r -d '' -a words <<<"$1" || true
  printf '%s' "${words[*]-}"
}

pulse_abs() {
  case $1 in
    /*) printf '%s' "$1" ;;
    *) printf '%s/%s' "${PULSE_RECIPE_DIR:-.}" "$1" ;;
  esac
}

pulse_ctime() {
  find "$1" -printf '%C@\n' 2>/dev/null | sort -n | tail -n 1
}

pulse_api_key() {
  PULSE_API_KEY_VALUE=
  if [[ -r $1 ]]; then PULSE_API_KEY_VALUE=$(pulse_env_get API_KEY "$1" 2>/dev/null) || PULSE_API_KEY_VALUE=; fi
}

pulse_curl_auth() {
  if [[ -n ${PULSE_API_KEY_VALUE:-} ]]; then
    printf 'Authorization: Bearer %s\n' "$PULSE_API_KEY_VALUE" | curl -H @- "$@"
  else
    curl "$@" </dev/null
  fi
}

# The first record names this script's process group, so cancelling the step can kill the group on the node
# (closing the ssh channel alone leaves it running).
_pulse_stat=$(</proc/$$/stat)
read -r -a _pulse_fields <<<"${_pulse_stat##*) }"
pulse_record pgid pgid:="${_pulse_fields[2]}" pid:=$$
unset _pulse_stat _pulse_fields
