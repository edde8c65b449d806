# pulse prelude: the first part of every node script. pulse sends prelude + `export NAME='value'` inputs + one
# step body to `bash -s` on stdin, so the node's login shell never parses any of it.
#
# Stable helpers (status.sh, smoke.sh and gpu-probe.sh use them too):
#   pulse_record KIND key=value key:=json ...   one `@pulse {"kind":KIND,...}` line on stdout. `key=value` is a
#                                               JSON string; `key:=v` is a number/true/false/null (anything else
#                                               is quoted as a string). Values are JSON-escaped; never pass secrets.
#   pulse_json_str VALUE                        prints VALUE as a JSON string literal (no newline).
#   pulse_json_to VAR VALUE                     the same into the variable VAR, in this shell (no fork).
#   pulse_fail CODE MESSAGE                     emits an `error` record, prints MESSAGE to stderr, exits CODE.
#   pulse_env_get KEY FILE                      prints the value of KEY in a .env WITHOUT executing the file
#                                               (parsed by awk in an empty environment); exit 1 when absent.
#   pulse_env_keys FILE                         prints each assignment key of a .env, one per line.
#   pulse_env_norm VALUE                        prints VALUE with white space runs collapsed to one space, trimmed.
#   pulse_abs PATH                              PATH, or $PULSE_RECIPE_DIR/PATH when PATH is relative.
#   pulse_ctime PATH                            newest ctime (epoch s, fractional) of PATH or the files under it.
#   pulse_api_key FILE                          the API_KEY of a .env into the variable PULSE_API_KEY_VALUE (never
#                                               printed); empty when unset.
#   pulse_lock_key DIR                          the name of DIR's deploy lock (lock.sh): 24 hex of sha256(DIR).
#   pulse_curl_auth ARGS...                     curl ARGS with `Authorization: Bearer $PULSE_API_KEY_VALUE` sent on
#                                               stdin (-H @-), so the key is never on a command line.
#   pulse_exit_words CODE [OOM]                 what a container exit code means, in words (OOM: State.OOMKilled).
#   pulse_docker [--within S] ARGS...           docker ARGS, ended after PULSE_DOCKER_BOUND_S (10) s or S s: EVERY
#                                               docker call of every step goes through it. 124: no answer in time.
#   pulse_docker_to VAR [--within S] ARGS...    the same, its stdout into VAR (the no-answer kept in this shell).
#   pulse_docker_answers                        0 when the Docker daemon answers; else 1, with docker's own words in
#                                               PULSE_DOCKER_DOWN. Asked only after a docker call failed.
#   pulse_fail_docker_down [WHAT]               emits a `docker` record (ok false) and fails with exit 15.
#   pulse_connections PORT                      how many client connections are open on PORT (ss, or /proc/net/tcp*).
#   pulse_vllm_gauges PAGE ENV                  vLLM's two scheduler gauges for the served model of the .env ENV, read
#                                               from the /metrics page in file PAGE: `ok RUNNING WAITING`, or
#                                               `bad WHY` for a page pulse cannot trust (see its comment).
#   pulse_vllm_inflight ENV [MAX_S]             GET /metrics of the server on PULSE_PROBE_HOST:PULSE_PORT (the API_KEY
#                                               of ENV on stdin), read by pulse_vllm_gauges: `STATUS ok RUNNING
#                                               WAITING` or `STATUS bad WHY` (STATUS: the HTTP code, null: no answer).
# Exit codes (runtime/node/types.ts SCRIPT_EXIT): 0 ok, 10 refused, 11 precondition failed, 12 temporary,
# 13 not ready, 14 unauthorized (the server wants a key the node .env does not give), 15 the Docker daemon does not
# answer (stopped, its socket missing, permission denied). Anything else is a script failure.
set -euo pipefail
umask 077
export LC_ALL=C
# shellcheck disable=SC2034 # the exit codes of every step (types.ts SCRIPT_EXIT): each step uses some of them
readonly PULSE_EXIT_OK=0 PULSE_EXIT_REFUSED=10 PULSE_EXIT_PRECONDITION=11 PULSE_EXIT_TEMPORARY=12 PULSE_EXIT_NOT_READY=13
# shellcheck disable=SC2034 # as above
readonly PULSE_EXIT_UNAUTHORIZED=14 PULSE_EXIT_DOCKER_DOWN=15

# pulse_json_to VAR VALUE: VAR = VALUE as a JSON string literal, without a subshell. pulse_record builds one per
# key and value, and every $(...) is a fork (~0.5 ms here): a 12-field record cost 11 ms that way, and a deploy's
# scripts write hundreds of fields. Its locals start with _pj so they never hide the caller's VAR.
pulse_json_to() {
  local _pj=$2
  _pj=${_pj//\\/\\\\}
  _pj=${_pj//\"/\\\"}
  _pj=${_pj//$'\n'/\\n}
  _pj=${_pj//$'\r'/\\r}
  _pj=${_pj//$'\t'/\\t}
  _pj=${_pj//[$'\001'-$'\037']/}
  printf -v "$1" '"%s"' "$_pj"
}

pulse_json_str() {
  local _pj_out
  pulse_json_to _pj_out "$1"
  printf '%s' "$_pj_out"
}

pulse_record() {
  local kind=$1 out arg key val
  shift
  pulse_json_to out "$kind"
  out="{\"kind\":$out"
  for arg in "$@"; do
    key=${arg%%=*}
    val=${arg#*=}
    if [[ $key == *: ]]; then
      key=${key%:}
      if [[ ! $val =~ ^(-?[0-9]+(\.[0-9]+)?|true|false|null)$ ]]; then pulse_json_to val "$val"; fi
    else
      pulse_json_to val "$val"
    fi
    pulse_json_to key "$key"
    out+=",$key:$val"
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
# mawk (the awk of Debian and Ubuntu, so of DGX OS) reads a pipe in blocks: a line would wait until 4 KiB more came
# or the stream ended, so a followed log or a live record would arrive late. -W interactive reads stdin line by line
# (and writes unbuffered); other awks do that already and may not know the flag.
_PULSE_AWK_LINES=()
if "$_PULSE_AWK" -W version </dev/null 2>/dev/null | grep -q mawk; then _PULSE_AWK_LINES=(-W interactive); fi
# The .env parser, the one rule for reading a .env (preflight's diff, every curl's key, write-env's carry-over): it
# only reads, nothing in the file is expanded or executed. Plain keys: KEY=value, KEY="value", KEY='value' (quoted
# values may span lines), leading blanks, `export `. The secrets HF_TOKEN and API_KEY must be carried byte for byte,
# so their lines are held to what bash's `source` sets for certain: one KEY=value per line, the value unquoted
# (letters, digits, _ . / : = , @ + % - only), double-quoted (no $, backtick, backslash) or single-quoted, on one
# line, then nothing but blanks and a # comment. Any other line that names a secret (declare, KEY+=, $(...), a line
# continuation, a second definition with another value) is a problem, reported by line and key, never by value.
# Modes: keys (list keys), get (one value then `x`, so trailing newlines survive command substitution),
# secrets (`bad<TAB>line<TAB>key<TAB>why` per problem, then `set<TAB>key<TAB>KEY="value"` per carried secret),
# redact (the .env files, then stdin `-`: each line of stdin with every secret value of 8 characters or more
# replaced by <redacted:KEY>, in each form a log prints it: as written, JSON-escaped, backslash-escaped as Python's
# repr does (vLLM's `non-default args: {...}` line), and each of those JSON-escaped again (a record of it); a value of
# a line it cannot carry counts too),
# public (one file: what of a .env may leave the node, the one rule for status, diff, a rollback's backup and the
# integrity hash: every line that names HF_TOKEN, API_KEY or VLLM_API_KEY is replaced, and so is the rest of a
# quoted value or a continued line it starts; a secret line the parser carries by
# @@PULSE_SECRET_LINE@@, a comment that names one by `# @@PULSE_SECRET_COMMENT@@`, any other by @@PULSE_SECRET_OTHER@@).
# shellcheck disable=SC2016 # an awk program: its $ are awk's, not bash's
_PULSE_ENV_AWK='
function is_secret(k) { return k == "HF_TOKEN" || k == "API_KEY" }
function mentions(s, t) {
  t = " " s " "
  if (t ~ /[^A-Za-z0-9_]API_KEY[^A-Za-z0-9_]/) return "API_KEY"
  if (t ~ /[^A-Za-z0-9_]HF_TOKEN[^A-Za-z0-9_]/) return "HF_TOKEN"
  return ""
}
function tail_ok(t) { return t ~ /^([ \t]+(#.*)?)?$/ }
function bad(k, why, r) {
  nbad++; bad_line[nbad] = FNR; bad_key[nbad] = k; bad_why[nbad] = why; bad_of[k] = 1; bad_at[FNR] = 1
  r = $0; if (!sub(/^[^=]*=/, "", r)) return
  gsub(/^[ \t"\047]+|[ \t"\047\\\r]+$/, "", r); raw[r] = k
}
function emit(k, v) { if (mode == "keys") print k; else if (k == want) { val = v; found = 1 } }
function secret(k, rest, q, i, v, t) {
  if (cont) return bad(k, "it continues the line before (that line ends in a backslash)")
  if (rest ~ /\\$/) return bad(k, "it ends in a backslash (a line continuation)")
  q = substr(rest, 1, 1)
  if (q == "\"" || q == "\047") {
    rest = substr(rest, 2); i = index(rest, q)
    if (i == 0) return bad(k, "its quoted value does not end on the same line")
    v = substr(rest, 1, i - 1); t = substr(rest, i + 1)
    if (q == "\"" && v ~ /[$`\\]/) return bad(k, "its double-quoted value holds $, a backtick or a backslash, which bash expands")
  } else {
    match(rest, /^[^ \t]*/); v = substr(rest, 1, RLENGTH); t = substr(rest, RLENGTH + 1)
    if (v ~ /\r/) return bad(k, "it ends in a carriage return (CRLF line endings); bash would keep it in the value")
    if (v !~ /^[A-Za-z0-9_.\/:=,@+%-]*$/) return bad(k, "its unquoted value holds a character that bash treats specially; put the value in single quotes")
  }
  if (!tail_ok(t)) return bad(k, "text follows the value (bash would join it to the value or run it as a command)")
  if (v ~ /[\001-\037\177]/) return bad(k, "its value holds a control character (CRLF line endings?)")
  raw[v] = k
  if ((k in sval) && sval[k] != v) return bad(k, "it defines " k " again, with another value than line " sline[k])
  if (!(k in sval)) order[++nset] = k
  sval[k] = v; sline[k] = FNR; carried[FNR] = 1
  emit(k, v)
}
function other_line(line, k) {
  k = mentions(line)
  if (k == "") return
  if (line ~ /^export[ \t]/ && line !~ /[=$`;&|<>()]/) return
  if (line ~ k "[ \t]*\\+=") return bad(k, k "+= appends to a value pulse cannot know")
  if (line ~ /^(declare|typeset|readonly|local|unset|read|printf|eval|source|\.)[ \t]/) return bad(k, "it sets " k " with a shell command, not a plain KEY=value line")
  return bad(k, "it is not a plain " k "=value line")
}
# A backslash before each character of `set` in t, by hand: what gsub makes of a backslash in its replacement differs
# between mawk (DGX OS) and gawk (a replacement of two backslashes gives one in mawk).
function esc(t, set, out, i, c) {
  out = ""
  for (i = 1; i <= length(t); i++) { c = substr(t, i, 1); out = out (index(set, c) ? "\\" c : c) }
  return out
}
function json_esc(t) { return esc(t, "\\\"") }
function bs_esc(t) { return esc(t, "\\") }
function add_form(f, k) { if (!(f in seen_form)) { seen_form[f] = 1; n_form++; rv[n_form] = f; rk[n_form] = k } }
# Each value in every form a log can print it (see redact above), longest first, so a form that holds another is
# replaced whole.
function redact_prepare(v, k, i, j, t, f, q) {
  for (v in raw) if (length(v) >= 8) {
    k = raw[v]; f = bs_esc(v); q = esc(v, "\\\047")
    add_form(v, k); add_form(json_esc(v), k); add_form(f, k); add_form(q, k)
    add_form(json_esc(f), k); add_form(json_esc(q), k)
  }
  for (i = 2; i <= n_form; i++) for (j = i; j > 1 && length(rv[j]) > length(rv[j - 1]); j--) {
    t = rv[j]; rv[j] = rv[j - 1]; rv[j - 1] = t; t = rk[j]; rk[j] = rk[j - 1]; rk[j - 1] = t
  }
  nred = n_form; ready = 1
}
function replace_all(s, v, by, i, out) {
  out = ""
  while ((i = index(s, v)) > 0) { out = out substr(s, 1, i - 1) by; s = substr(s, i + length(v)) }
  return out s
}
function redact(s, i) {
  for (i = 1; i <= nred; i++) s = replace_all(s, rv[i], "<redacted:" rk[i] ">")
  return s
}
# public mode: whether a line names a secret (the word, not a longer name such as MY_API_KEY).
function names_secret(l) {
  return l ~ /(^|[^A-Za-z0-9_])(VLLM_API_KEY|API_KEY|HF_TOKEN)([^A-Za-z0-9_]|$)/
}
mode == "redact" && FILENAME == "-" { if (!ready) redact_prepare(); print redact($0); fflush(); next }
FNR == 1 { inq = ""; cont = 0 }
# public: decide before the parser reads the line (inq and cont are still the state of the line before).
mode == "public" {
  pub_n = FNR; pub[FNR] = $0
  if (p_cont) { p_cont = /\\$/; pub_mask[FNR] = 1 }
  else if (p_skip) { if (index($0, p_q)) p_skip = 0; pub_mask[FNR] = 1 }
  else if (names_secret($0)) {
    pub_mask[FNR] = 1
    if (inq == "" && !cont && $0 ~ /^[ \t]*#/) pub_comment[FNR] = 1
    else {
      v = $0; sub(/^[^=]*=/, "", v); p_q = substr(v, 1, 1)
      if ((p_q == "\"" || p_q == "\047") && !index(substr(v, 2), p_q)) p_skip = 1
      p_cont = /\\$/
    }
  }
}
{
  line = $0
  if (inq != "") {
    i = index(line, inq)
    if (i == 0) { buf = buf "\n" line; next }
    buf = buf "\n" substr(line, 1, i - 1); emit(key, buf); inq = ""
    t = substr(line, i + 1)
    if (!tail_ok(t) && mentions(t) != "") bad(mentions(t), "it is set on the line of another key")
    cont = (t ~ /\\$/); next
  }
  sub(/^[ \t]+/, "", line)
  if (line == "" || substr(line, 1, 1) == "#") { cont = 0; next }
  full = line; was_cont = cont; cont = (full ~ /\\$/)
  sub(/^export[ \t]+/, "", line)
  if (!match(line, /^[A-Za-z_][A-Za-z0-9_]*=/)) {
    k = mentions(full)
    if (k != "" && was_cont) bad(k, "it continues the line before (that line ends in a backslash)"); else other_line(full)
    next
  }
  key = substr(line, 1, RLENGTH - 1); rest = substr(line, RLENGTH + 1)
  if (is_secret(key)) { c = cont; cont = was_cont; secret(key, rest); cont = c; next }
  q = substr(rest, 1, 1)
  if (q == "\"" || q == "\047") {
    rest = substr(rest, 2); i = index(rest, q)
    if (i == 0) { inq = q; buf = rest; cont = 0; next }
    emit(key, substr(rest, 1, i - 1)); t = substr(rest, i + 1)
    if (!tail_ok(t) && mentions(t) != "") bad(mentions(t), "it is set on the line of another key")
    next
  }
  if (mentions(rest) != "" && rest !~ /^[A-Za-z0-9_.\/:=,@+%-]*([ \t]+(#.*)?)?$/) bad(mentions(rest), "it is set on the line of another key")
  sub(/[ \t]+#.*$/, "", rest); sub(/[ \t]+$/, "", rest)
  emit(key, rest)
}
END {
  if (mode == "public") for (i = 1; i <= pub_n; i++) {
    if (!(i in pub_mask)) print pub[i]
    else if (i in pub_comment) print "# @@PULSE_SECRET_COMMENT@@"
    else if ((i in carried) && !(i in bad_at)) print "@@PULSE_SECRET_LINE@@"
    else print "@@PULSE_SECRET_OTHER@@"
  }
  if (mode == "get") { if (!found || (want in bad_of)) exit 1; printf "%sx", val }
  if (mode == "secrets") {
    for (i = 1; i <= nbad; i++) printf "bad\t%d\t%s\t%s\n", bad_line[i], bad_key[i], bad_why[i]
    for (i = 1; i <= nset; i++) {
      k = order[i]; v = sval[k]
      if (v ~ /[$`\\"]/) printf "set\t%s\t%s=\047%s\047\n", k, k, v; else printf "set\t%s\t%s=\"%s\"\n", k, k, v
    }
  }
}'

pulse_env_keys() {
  env -i "$_PULSE_AWK" -v mode=keys -v want= "$_PULSE_ENV_AWK" "$1"
}

pulse_env_get() {
  local out
  out=$(env -i "$_PULSE_AWK" -v mode=get -v want="$1" "$_PULSE_ENV_AWK" "$2") || return 1
  printf '%s' "${out%x}"
}

# What of a .env may leave the node (mode=public above): every line that names a secret replaced by a marker. The one
# rule for status's text, diff, a rollback's backup and the live .env's text, and the integrity hash below.
pulse_env_public() {
  env -i "$_PULSE_AWK" -v mode=public -v want= "$_PULSE_ENV_AWK" "$1"
}

# The carry-over plan of a .env's HF_TOKEN/API_KEY lines (mode=secrets above); never printed as it is.
pulse_env_secrets() {
  env -i "$_PULSE_AWK" -v mode=secrets -v want= "$_PULSE_ENV_AWK" "$1"
}

# pulse_env_secrets_to VAR FILE: VAR = pulse_env_secrets FILE, in this shell; returns 1 when the parse failed (awk
# could not read the file, or died), with why in PULSE_ENV_UNREAD, and the caller fails: read through `< <(...)` such
# a failure went unseen, and a .env whose secret lines were never read would be written again without its
# HF_TOKEN/API_KEY (a deploy that fails later, far from its cause).
PULSE_ENV_UNREAD=
pulse_env_secrets_to() {
  local _ps_out
  if ! _ps_out=$(pulse_env_secrets "$2"); then
    # shellcheck disable=SC2034 # read by the steps that call this (write-env, read-backup, preflight)
    PULSE_ENV_UNREAD="cannot read the HF_TOKEN/API_KEY lines of $2 (its parse failed); nothing was changed"
    return 1
  fi
  printf -v "$1" '%s' "$_ps_out"
}

# pulse_private_file VAR: VAR = the path of a new, empty, private (umask 077) file that has no name on disk: it is
# created, opened on a descriptor this shell keeps, and unlinked at once. A copy of a .env kept there is gone when the
# step ends however it ends: an EXIT trap would not run after a SIGKILL of the step's process group (a cancel's
# kill-group.sh). The path is /proc/$$/fd/N: any process of the step opens it (from its start) while the step lives.
pulse_private_file() {
  local _pf_name _pf_fd
  _pf_name=$(mktemp) || pulse_fail "$PULSE_EXIT_PRECONDITION" 'cannot create a temp file'
  exec {_pf_fd}<>"$_pf_name"
  rm -f -- "$_pf_name"
  printf -v "$1" '/proc/%s/fd/%s' "$$" "$_pf_fd"
}

# write-env's temp files beside the .env (the new .env before its rename, the backup before its rename: a rename
# needs a name in the same dir, so pulse_private_file cannot hold them). write-env holds an flock on each while it
# lives (pulse_hold_temp); the kernel drops the lock when the holder dies, SIGKILL included. pulse_sweep_temps (every
# step runs it, script.ts, right after its inputs) removes the temp files of the step's recipe dirs that no live step
# holds, so a copy with secrets left by a killed write-env is gone at the next step on that recipe (its retry first).
_PULSE_TEMP_GLOBS=('.env.pulse-tmp.*' '.env.pulse-bak-tmp.*')
pulse_hold_temp() {
  local _ph_fd
  if ! { exec {_ph_fd}<"$1"; } || ! flock -x -w 5 "$_ph_fd"; then pulse_fail "$PULSE_EXIT_TEMPORARY" "cannot lock the temp file $1"; fi
  # Another step's sweep may have taken the file between its creation and this lock: then it is gone (retried).
  [[ $1 -ef /proc/$$/fd/$_ph_fd ]] || pulse_fail "$PULSE_EXIT_TEMPORARY" "the temp file $1 was removed before it was locked (another step's sweep)"
}

pulse_sweep_temps() {
  local d f g fd
  for d in "${PULSE_ENV_PATH:+$(dirname -- "$PULSE_ENV_PATH")}" "${PULSE_RECIPE_DIR:-}"; do
    [[ -n $d && -d $d ]] || continue
    for g in "${_PULSE_TEMP_GLOBS[@]}"; do
      for f in "$d"/$g; do
        [[ -f $f && ! -L $f ]] || continue
        { exec {fd}<"$f"; } 2>/dev/null || continue
        if flock -n -x "$fd"; then rm -f -- "$f"; fi
        exec {fd}<&-
      done
    done
  done
  return 0
}

# Everything a script prints leaves the node through pulse_redact (stdout and stderr, installed at the end of
# this prelude): the values of API_KEY and HF_TOKEN from the node's own recipe .env files are replaced before
# any tail, log excerpt or record reaches the controller. The values never appear on a command line.
pulse_redact() {
  env -i "$_PULSE_AWK" "${_PULSE_AWK_LINES[@]}" -v mode=redact -v want= "$_PULSE_ENV_AWK" "$@" -
}

# A filter for raw text before a script encodes it (a log line before it becomes a record): pulse_redact with the
# .env files pulse_redact_output found, so the value is replaced in the form the log wrote it, before any escaping.
_PULSE_REDACT_ENVS=()
pulse_redact_raw() {
  if ((${#_PULSE_REDACT_ENVS[@]} > 0)); then pulse_redact "${_PULSE_REDACT_ENVS[@]}"; else cat; fi
}

# A pulse header of a .env (`# pulse-<name>: value`): pulse_env_header NAME FILE.
pulse_env_header() {
  sed -n "s/^# pulse-$1: //p" "$2" | head -n 1
}

# The integrity hash of a .env: the sha256 of every line of its public text but the six `# pulse-<field>:` header
# lines and the carried secret lines (@@PULSE_SECRET_LINE@@). For a file as pulse wrote it, those are its assignment
# lines, which `# pulse-sha256:` hashes; any other line (a command, a comment, a blank, a secret line pulse cannot
# carry) changes it. runtime/config/env-header.ts envBodySha256 hashes the same lines of the same text.
pulse_body_sha() {
  # grep -v exits 1 when every line goes (a .env of secret lines only): not a failure here.
  pulse_env_public "$1" | { grep -vE '^(# pulse-(profile|node|recipe|overlay|rendered|sha256): |@@PULSE_SECRET_LINE@@$)' || true; } |
    sha256sum | cut -d' ' -f1
}

# pulse_copy_regular SRC DEST: copies SRC to DEST (a private file) only when SRC is what pulse writes as a .env or
# backup: a regular file, not a symbolic link, owned by this user, not writable by group or others, with one link,
# at most 1 MiB.
# The checks are made on the file that was opened (its descriptor), so a swap of SRC between check and read is seen.
# Otherwise prints why not (one phrase, no content) and returns 1; DEST is then empty.
pulse_copy_regular() {
  local src=$1 dest=$2 fd opened named uid mode links size type
  : >"$dest"
  if [[ -L $src ]]; then printf 'it is a symbolic link, not a file pulse wrote'; return 1; fi
  if [[ ! -e $src ]]; then printf 'it is not there'; return 1; fi
  if [[ ! -f $src ]]; then printf 'it is not a regular file'; return 1; fi
  { exec {fd}<"$src"; } 2>/dev/null || { printf 'it cannot be read'; return 1; }
  opened=$(stat -L -c '%d:%i %u %a %h %s %F' "/proc/$BASHPID/fd/$fd" 2>/dev/null) || opened=
  named=$(stat -c '%d:%i %F' -- "$src" 2>/dev/null) || named=
  read -r _ uid mode links size type <<<"$opened"
  local why=
  if [[ -z $opened || ${opened%% *} != "${named%% *}" || $named != *' regular '* ]]; then why='it changed while it was read (replaced or turned into a link)'
  elif [[ $type != regular* ]]; then why='it is not a regular file'
  elif [[ $uid != "$EUID" ]]; then why="it is owned by uid $uid, not by the ssh user (uid $EUID) that pulse writes it as"
  elif ((8#$mode & 8#022)); then why="group or others may write it (mode $mode)"
  elif [[ $links != 1 ]]; then why="it has $links hard links (pulse writes one)"
  elif ((size > 1048576)); then why="it is $size bytes; a .env pulse writes is a few KiB"
  fi
  if [[ -n $why ]]; then exec {fd}<&-; printf '%s' "$why"; return 1; fi
  cat <&"$fd" >"$dest" || { exec {fd}<&-; printf 'it cannot be read'; return 1; }
  exec {fd}<&-
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

# vLLM's gauges vllm:num_requests_running and vllm:num_requests_waiting (vllm/v1/metrics/loggers.py), labelled
# model_name (the first served name: SERVED_MODEL_NAME, else MODEL) and engine (summed: one per data-parallel engine).
# A count is a whole number >= 0: a negative, NaN, infinite or fractional value, or a page without both gauges for
# the served model, is a page that lies or belongs to another server, and `bad` says which; summing it anyway once
# turned running 2, waiting -2 into "idle" and a NaN into -2147483647 (mawk). The label value is escaped as
# prometheus_client escapes it, and goes to awk through ENVIRON (awk -v would read its backslashes as escapes).
pulse_vllm_gauges() {
  local served
  served=$(pulse_env_get SERVED_MODEL_NAME "$2" 2>/dev/null) || served=
  [[ -n ${served// /} ]] || served=$(pulse_env_get MODEL "$2" 2>/dev/null) || served=
  read -r served _ <<<"$served" || true
  served=${served//\\/\\\\}
  served=${served//\"/\\\"}
  PULSE_GAUGE_LABEL="model_name=\"$served\"" PULSE_GAUGE_MODEL="${served:-?}" awk '
    function take(kind,   rest, f) {
      if (index($0, ENVIRON["PULSE_GAUGE_LABEL"]) == 0) return
      rest = $0
      sub(/^[^}]*}[ \t]*/, "", rest)
      split(rest, f, /[ \t]+/)
      if (f[1] !~ /^[0-9]+(\.0*)?$/) { bad = bad (bad == "" ? "" : ", ") "vllm:num_requests_" kind " is " (f[1] == "" ? "empty" : f[1]); return }
      sum[kind] += f[1]
      seen[kind] = 1
    }
    /^vllm:num_requests_running\{/ { take("running") }
    /^vllm:num_requests_waiting\{/ { take("waiting") }
    END {
      m = ENVIRON["PULSE_GAUGE_MODEL"]
      if (bad != "") printf "bad GET /metrics: %s for model %s (a count of requests is a whole number, never negative, NaN or infinite)\n", bad, m
      else if (!seen["running"] || !seen["waiting"]) printf "bad GET /metrics has no vllm:num_requests_running and vllm:num_requests_waiting gauges for model %s\n", m
      else printf "ok %d %d\n", sum["running"], sum["waiting"]
    }' "$1"
}

pulse_vllm_inflight() {
  local page out code host=$PULSE_PROBE_HOST
  page=$(mktemp)
  pulse_api_key "$1"
  [[ $host != *:* ]] || host="[$host]"
  out=$(pulse_curl_auth -s -o "$page" -w '%{http_code}' --max-time "${2:-5}" "http://$host:$PULSE_PORT/metrics" 2>/dev/null) || true
  unset PULSE_API_KEY_VALUE
  [[ $out =~ ^[0-9]{3}$ ]] && code=$((10#$out)) || code=0
  if ((code == 200)); then
    printf '200 %s\n' "$(pulse_vllm_gauges "$page" "$1")"
  elif ((code == 0)); then
    echo 'null bad GET /metrics: no answer'
  elif ((code == 404)); then
    echo '404 bad the server serves no /metrics (404: an older build, or its Prometheus page is off)'
  else
    echo "$code bad GET /metrics: HTTP $code"
  fi
  rm -f "$page"
}

pulse_lock_key() {
  printf '%s' "$1" | sha256sum | cut -c1-24
}

pulse_curl_auth() {
  if [[ -n ${PULSE_API_KEY_VALUE:-} ]]; then
    printf 'Authorization: Bearer %s\n' "$PULSE_API_KEY_VALUE" | curl -H @- "$@"
  else
    curl "$@" </dev/null
  fi
}

# A container's exit code as docker records it (moby daemon/monitor.go: the process's status, 128 + N when signal N
# ended it) and what it means for a vLLM server: vLLM ends with 130 when SIGTERM comes while it still loads (its
# handler raises KeyboardInterrupt), with 0 after a drain; 137 is SIGKILL (docker stop's timeout ran out, docker
# kill, docker rm -f, or the kernel's OOM killer when OOM is true).
pulse_exit_words() {
  local code=$1 oom=${2:-false}
  case $code in
    0) printf 'exit 0: it ended by itself or after a clean shutdown' ;;
    130) printf 'exit 130: ended by SIGINT; vLLM exits so when SIGTERM comes while it still loads the model' ;;
    137)
      if [[ $oom == true ]]; then printf 'exit 137: killed by the kernel OOM killer (State.OOMKilled)'
      else printf 'exit 137: killed by SIGKILL (docker stop timed out and killed it, docker kill, or docker rm -f)'; fi ;;
    143) printf 'exit 143: ended by SIGTERM without a handler' ;;
    *)
      if [[ $code =~ ^[0-9]+$ ]] && ((code > 128 && code < 160)); then printf 'exit %s: ended by signal %s' "$code" $((code - 128))
      else printf 'exit %s: the server failed' "$code"; fi ;;
  esac
}

# Every docker call of every step goes through pulse_docker, within a bound: a Docker daemon that is frozen (stopped
# by SIGSTOP, wedged) accepts the call on its socket and never answers, and a docker CLI waiting on it waits for ever,
# with the node's deploy lock held. `timeout --foreground` keeps the docker CLI in the step's process group (so a
# cancel's kill of the group reaches it; without --foreground timeout moves itself and docker to a group of their
# own); the CLI ends on SIGTERM, and -k sends SIGKILL 2 s later should it not.
#
# Every docker command also fails with exit 1 both when the object is absent and when the daemon does not answer (its
# socket is missing, the daemon is stopped, the user may not use the socket), so a failed `docker container inspect`
# alone must never be read as "no such container", nor a failed `docker image inspect` as "image not on the node".
# After a failed call a script asks pulse_docker_answers once: `docker version` asks the daemon for its version
# (through pulse_docker, so within the same bound). PULSE_DOCKER_DOWN keeps docker's own words (e.g. "Cannot connect
# to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?", or "permission denied while
# trying to connect to the Docker daemon socket at ..."), or "did not answer within N s"; the answer is kept for the
# rest of the script, and once the daemon is known not to answer no later pulse_docker waits for it again.
PULSE_DOCKER_BOUND_S=10
PULSE_DOCKER_DOWN=
_pulse_docker_asked=false
# true when the daemon did not answer within the bound (a frozen daemon), not when it refused at once.
_pulse_docker_silent=false

# pulse_docker [--within S] ARGS...: docker ARGS with stdin from /dev/null, ended after S seconds (default
# PULSE_DOCKER_BOUND_S; `--within 0` only for a follow, which the user ends). Returns docker's status, or 124 when
# the daemon did not answer in time or is already known not to (a docker command's own status 124 or 137 before the
# bound is returned as 1). In this shell it also keeps that answer (pulse_docker_answers then says so at once); in a
# $(...) or a pipeline the answer stays in the subshell: pulse_docker_to keeps it.
pulse_docker() {
  local within=$PULSE_DOCKER_BOUND_S rc=0 t0
  if [[ ${1:-} == --within ]]; then within=$2; shift 2; fi
  if [[ $_pulse_docker_asked == true && $_pulse_docker_silent == true ]]; then return 124; fi
  if ((within == 0)); then
    # In a subshell (`&`, a pipeline) docker replaces it, so a kill of the job's pid reaches docker itself.
    if ((BASHPID != $$)); then exec docker "$@" </dev/null; fi
    docker "$@" </dev/null
    return
  fi
  t0=${EPOCHREALTIME/[.,]/}
  timeout --foreground -k 2 "$within" docker "$@" </dev/null || rc=$?
  ((rc == 124 || rc == 137)) || return "$rc"
  # A status of 124 or 137 from before the bound is docker's own (an exec'd process killed), not the timeout's.
  if (( ${EPOCHREALTIME/[.,]/} - t0 < within * 1000000 )); then return 1; fi
  _pulse_docker_no_answer "$within" "$@"
  return 124
}

# _pulse_docker_no_answer S ARGS...: the daemon did not answer `docker ARGS` within S seconds; kept for the rest of
# the script. The words name the command (`docker container inspect`), never its arguments.
_pulse_docker_no_answer() {
  local what=$2
  [[ $2 != container && $2 != image ]] || what+=" ${3:-}"
  _pulse_docker_asked=true
  _pulse_docker_silent=true
  PULSE_DOCKER_DOWN="the Docker daemon did not answer within $1 s (docker $what; it may be frozen or overloaded)"
}

# pulse_docker_to VAR [--within S] ARGS...: VAR = what pulse_docker ARGS prints on stdout (its stderr is dropped, and
# trailing newlines go as with $(...)); returns its status. The no-answer is kept in this shell, so the caller's
# pulse_docker_answers says so at once instead of waiting a second bound.
pulse_docker_to() {
  local _pd_var=$1 _pd_out _pd_rc=0 _pd_within=$PULSE_DOCKER_BOUND_S
  shift
  _pd_out=$(pulse_docker "$@" 2>/dev/null) || _pd_rc=$?
  printf -v "$_pd_var" '%s' "$_pd_out"
  if ((_pd_rc == 124)) && [[ $_pulse_docker_silent != true ]]; then
    if [[ ${1:-} == --within ]]; then _pd_within=$2; shift 2; fi
    _pulse_docker_no_answer "$_pd_within" "$@"
  fi
  return "$_pd_rc"
}

pulse_docker_answers() {
  local out rc=0 line
  if [[ $_pulse_docker_asked == true ]]; then
    if [[ -z $PULSE_DOCKER_DOWN ]]; then return 0; else return 1; fi
  fi
  out=$(pulse_docker version --format '{{.Server.Version}}' 2>&1) || rc=$?
  if ((rc == 124)); then _pulse_docker_no_answer "$PULSE_DOCKER_BOUND_S" version; return 1; fi
  _pulse_docker_asked=true
  ((rc != 0)) || return 0
  line=
  while IFS= read -r line; do [[ -z ${line//[[:space:]]/} ]] || break; done <<<"$out"
  PULSE_DOCKER_DOWN="the Docker daemon does not answer: ${line:0:400}"
  [[ -n $line ]] || PULSE_DOCKER_DOWN+="docker version exited $rc"
  return 1
}

# pulse_docker_alive: false when the daemon did not answer `docker version` within the bound (a frozen daemon; the
# answer is kept, as pulse_docker keeps it); true when it answered, or refused at once (that is not a hang).
pulse_docker_alive() {
  local rc=0
  pulse_docker version --format '{{.Server.Version}}' >/dev/null 2>&1 || rc=$?
  ((rc != 124))
}

# pulse_kill_tree PID: SIGKILL a process and everything it started (children first, the parent stopped meanwhile so
# it starts no more); for a script of the recipe's that this step started and must end.
pulse_kill_tree() {
  local child
  kill -STOP "$1" 2>/dev/null || return 0
  for child in $(pgrep -P "$1" 2>/dev/null); do pulse_kill_tree "$child"; done
  kill -KILL "$1" 2>/dev/null || true
}

# The `docker` record says whether the daemon was silent (timedOut: it did not answer within the bound), so pulse
# does not retry the step: each attempt would wait the bound again with the node's lock held.
pulse_fail_docker_down() {
  pulse_record docker ok:=false daemon:=false timedOut:="$_pulse_docker_silent" detail="$PULSE_DOCKER_DOWN"
  pulse_fail "$PULSE_EXIT_DOCKER_DOWN" "$PULSE_DOCKER_DOWN${1:+ ($1)}"
}

# pulse_redact_output: from here on, stdout and stderr leave the node through pulse_redact, with the secrets of
# the node's .env files (this step's, the recipe's, each recipe of PULSE_RECIPES). script.ts calls it right after
# the inputs are exported (it needs them), before the step body runs.
pulse_redact_output() {
  local -a envs=()
  local f
  for f in "${PULSE_ENV_PATH:-}" "${PULSE_RECIPE_DIR:+$PULSE_RECIPE_DIR/.env}"; do
    [[ -z $f || ! -r $f ]] || envs+=("$f")
  done
  while IFS=$'\t' read -r _ f _; do
    [[ -z $f || ! -r $f/.env ]] || envs+=("$f/.env")
  done <<<"${PULSE_RECIPES:-}"
  _PULSE_REDACT_ENVS=("${envs[@]}")
  ((${#envs[@]} > 0)) || return 0
  exec 3>&2
  exec 2> >(pulse_redact "${envs[@]}" >&3 2>/dev/null)
  exec 1> >(pulse_redact "${envs[@]}")
  exec 3>&-
}

# The first record names this script's process group, so cancelling the step can kill the group on the node
# (closing the ssh channel alone leaves it running).
read -r _pulse_stat </proc/$$/stat
read -r -a _pulse_fields <<<"${_pulse_stat##*) }"
pulse_record pgid pgid:="${_pulse_fields[2]}" pid:=$$
unset _pulse_stat _pulse_fields

# Open client connections on a server port (ss, or /proc/net/tcp{,6} when ss is missing): preflight's count, and
# the drain's fallback where it cannot read the server's /metrics. Idle keep-alive connections count too.
pulse_connections() {
  local n
  if command -v ss >/dev/null 2>&1; then
    n=$(ss -Htn state established "( sport = :$1 )" 2>/dev/null | wc -l)
  else
    n=$(cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk -v p=":$(printf '%04X' "$1")" '$4 == "01" && substr($2, length($2) - 4) == p' | wc -l)
  fi
  printf '%d\n' "${n:-0}"
}
