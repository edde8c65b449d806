# port: who listens on the server's port (a library for start.sh and verify.sh; script.ts puts it after the prelude).
# vLLM binds its port with SO_REUSEADDR and SO_REUSEPORT before it loads the model (api_server.py
# create_server_socket), so another process of the same user (any root process, for a root container) can share
# the port, and the kernel then hands each connection to one of them. With the recipe's `--network host` the
# container's socket lives in the node's own network namespace, so the kernel's socket tables list it:
# /proc/net/tcp and tcp6 show every socket's state, address, uid and inode to any user. Which process holds an
# inode is in /proc/PID/fd, readable only for the user's own processes (all of them for root); a root container's
# are read inside it with `docker exec`.
#
#   pulse_port_listeners PORT BIND     one line per LISTEN socket on PORT whose address covers BIND (the wildcard,
#                                      BIND itself, any address when BIND is a wildcard): inode<TAB>uid<TAB>address
#   pulse_socket_holders INODE...      inode<TAB>pid for each process this user can see that holds one of the inodes
#   pulse_descendants PID              PID and every process below it, one per line
#   pulse_pid_words PID                pid, uid and command line of PID in one line (the value of a flag named *key,
#                                      *token, *secret or *password, e.g. --api-key or --hf-token, and of a *KEY=/
#                                      *TOKEN= word is replaced by <redacted>), or "pid N (gone or not visible)"
#   pulse_port_words PORT BIND         the listeners in words, one per line (holders named where visible)

pulse_port_listeners() {
  # shellcheck disable=SC2016 # an awk program: its $ are awk's, not bash's
  { cat /proc/net/tcp /proc/net/tcp6 2>/dev/null </dev/null || true; } | "$_PULSE_AWK" -v port="$1" -v bind="${2:-}" '
    function hexval(s, i, v) { v = 0; s = toupper(s); for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789ABCDEF", substr(s, i, 1)) - 1; return v }
    function v4(h) { return hexval(substr(h, 7, 2)) "." hexval(substr(h, 5, 2)) "." hexval(substr(h, 3, 2)) "." hexval(substr(h, 1, 2)) }
    function v6(h, i, w, b, out, zero, mapped) {
      # four 32-bit words, each in host (little-endian) byte order
      for (w = 0; w < 4; w++) for (i = 0; i < 4; i++) b[w * 4 + i] = hexval(substr(h, w * 8 + (3 - i) * 2 + 1, 2))
      zero = 1; for (i = 0; i < 16; i++) if (b[i] != 0 && !(i == 15 && b[i] == 1)) zero = 0
      if (zero) return b[15] == 1 ? "::1" : "::"
      mapped = (b[10] == 255 && b[11] == 255); for (i = 0; i < 10; i++) if (b[i] != 0) mapped = 0
      if (mapped) return b[12] "." b[13] "." b[14] "." b[15]
      out = ""; for (i = 0; i < 16; i += 2) out = out (i ? ":" : "") sprintf("%x", b[i] * 256 + b[i + 1])
      return out
    }
    $1 ~ /^[0-9]+:$/ && $4 == "0A" {
      split($2, la, ":"); if (hexval(la[2]) != port) next
      addr = length(la[1]) == 8 ? v4(la[1]) : v6(la[1])
      wild = bind == "" || bind == "0.0.0.0" || bind == "::"
      if (wild || addr == bind || addr == "0.0.0.0" || addr == "::" || (index(bind, ":") && index(addr, ":"))) print $10 "\t" $8 "\t" addr
    }'
}

pulse_socket_holders() {
  (($# > 0)) || return 0
  local want=" $* "
  # find's exit status is not a verdict: processes end while it reads, and other users' fds are not readable.
  # shellcheck disable=SC2016 # an awk program: its $ are awk's, not bash's
  { find /proc/[0-9]*/fd -mindepth 1 -maxdepth 1 -lname 'socket:*' -printf '%h %l\n' 2>/dev/null </dev/null || true; } |
    "$_PULSE_AWK" -v want="$want" '{ split($1, p, "/"); ino = $2; gsub(/[^0-9]/, "", ino); if (index(want, " " ino " ")) print ino "\t" p[3] }' | sort -u
}

pulse_descendants() {
  # /proc/PID/stat is readable by any user; the command name in it may hold spaces and parentheses, so the fields
  # are read after the last ")".
  # shellcheck disable=SC2016 # an awk program: its $ are awk's, not bash's
  { cat /proc/[0-9]*/stat 2>/dev/null </dev/null || true; } | "$_PULSE_AWK" -v root="$1" '
    { pid = $1; rest = $0; sub(/.*\) /, "", rest); split(rest, f, " "); kids[f[2]] = kids[f[2]] " " pid }
    END {
      n = 1; q[1] = root; seen[root] = 1
      for (i = 1; i <= n; i++) { print q[i]; m = split(kids[q[i]], c, " "); for (j = 1; j <= m; j++) if (!(c[j] in seen)) { seen[c[j]] = 1; q[++n] = c[j] } }
    }'
}

pulse_pid_words() {
  local pid=$1 uid cmd
  # shellcheck disable=SC2016 # an awk program: its $ are awk's, not bash's
  uid=$("$_PULSE_AWK" '/^Uid:/ { print $2; exit }' "/proc/$pid/status" 2>/dev/null </dev/null) || uid=
  # shellcheck disable=SC2016 # an awk program: its $ are awk's, not bash's
  cmd=$(tr '\0' '\n' 2>/dev/null <"/proc/$pid/cmdline" | "$_PULSE_AWK" '
    redact { printf " <redacted>"; redact = 0; next }
    tolower($0) ~ /^--?[a-z0-9_-]*(key|token|secret|password)$/ { printf "%s%s", (NR > 1 ? " " : ""), $0; redact = 1; next }
    tolower($0) ~ /^--?[a-z0-9_-]*(key|token|secret|password)=/ || /(KEY|TOKEN|SECRET|PASSWORD)[A-Za-z0-9_]*=/ { sub(/=.*/, "=<redacted>") }
    { printf "%s%s", (NR > 1 ? " " : ""), $0 }' | head -c 200) || cmd=
  if [[ -z $uid ]]; then printf 'pid %s (gone or not visible)' "$pid"; else printf 'pid %s (uid %s: %s)' "$pid" "$uid" "${cmd:-?}"; fi
}

pulse_port_words() {
  local ino uid addr pids p words
  while IFS=$'\t' read -r ino uid addr; do
    [[ -n $ino ]] || continue
    pids=$(pulse_socket_holders "$ino" | cut -f2 | tr '\n' ' ')
    words=
    for p in $pids; do words+="${words:+, }$(pulse_pid_words "$p")"; done
    [[ $addr != *:* ]] || addr="[$addr]"
    # shellcheck disable=SC2016 # the single quotes are text in a double-quoted string: the $ there does expand
    printf '%s:%s (socket %s, uid %s) held by %s\n' "$addr" "$1" "$ino" "$uid" "${words:-no process this user can see (sudo ss -ltnp 'sport = :$1' names it)}"
  done < <(pulse_port_listeners "$1" "$2")
}
