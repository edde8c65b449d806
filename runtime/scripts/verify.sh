# verify: what the server really runs. /v1/models (sent back base64: the controller parses the JSON), the KV
# cache lines of the container log, and each pulse-proof text (the controller turns a missing one into a warning).
# vLLM logs the KV cache in one line (current) or as a size line and a concurrency line (older releases), each
# with a process prefix; the controller joins them (runtime/steps/kv-cache.ts).
# Inputs: PULSE_ENV_PATH, PULSE_PORT, PULSE_BIND, PULSE_PROBE_HOST, PULSE_CONTAINER, PULSE_PROOFS (one per line),
# PULSE_LOG_PATH (may be empty), PULSE_STAMP. Records: models{httpStatus,body_b64}, engine{healthStatus}, port-listener{inode,uid,address,
# owner,holders}, port{proven,shared,detail}, auth{keyExpected,unauthenticatedStatus}, kv-cache{line},
# kv-concurrency{line}, proof{text,found}.
command -v curl >/dev/null 2>&1 || pulse_fail "$PULSE_EXIT_PRECONDITION" 'curl is not on PATH on the node'
pulse_api_key "$PULSE_ENV_PATH"
host=$PULSE_PROBE_HOST
[[ $host != *:* ]] || host="[$host]"
# The status code goes after the body on a line of its own: a 401 is its own failure (the server wants a key that
# the node .env does not give), not a missing model.
out=$(pulse_curl_auth -s --max-time 10 -w '\n%{http_code}' "http://$host:$PULSE_PORT/v1/models" 2>/dev/null) || true
code=${out##*$'\n'}
body=${out%$'\n'*}
[[ $out == *$'\n'* ]] || body=
[[ $code =~ ^[0-9]{3}$ ]] && code=$((10#$code)) || code=0
pulse_record models httpStatus:="$code" body_b64="$(printf '%s' "$body" | head -c 262144 | base64 -w0)"
unset out body
# The engine: vLLM's GET /health (no key) answers 200 while the engine core lives and 503 once it is dead
# (EngineDeadError), while /v1/models, which needs no engine, still answers 200.
hcode=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 "http://$host:$PULSE_PORT/health" </dev/null 2>/dev/null) || true
[[ $hcode =~ ^[0-9]{3}$ ]] && hcode=$((10#$hcode)) || hcode=0
pulse_record engine healthStatus:="$hcode"

# Who answered: the port proof. Every socket that listens on the port (for BIND) must be one of the container's: the
# kernel shares an SO_REUSEPORT port between the sockets of one user, so a stray old server there would take a share
# of the connections, and the answers above could be its. A socket is the container's when the container itself
# lists it (docker exec: inside, the container's pid namespace shows only its processes, as root, so their fds are
# readable even when this user cannot read them on the node) or when a process that holds it is the container's
# State.Pid or below it (or in its cgroup). One `port-listener` record per socket (owner container, other, or
# unknown: held by nothing this user can see and the container could not be asked), then one `port` record.
port_proof() {
  local info pid cid mode listeners ino uid addr inside='' exec_ok=false members holders owner words p n_mine=0 n_other=0 n_unknown=0
  # Nothing here can be verified without docker: a daemon that does not answer fails the step (exit 15).
  pulse_docker_to info container inspect --format '{{.State.Pid}} {{.Id}} {{.HostConfig.NetworkMode}}' "$PULSE_CONTAINER" ||
    { info=; pulse_docker_answers || pulse_fail_docker_down "verify of container $PULSE_CONTAINER"; }
  read -r pid cid mode <<<"$info" || true
  if [[ ! ${pid:-} =~ ^[1-9][0-9]*$ ]]; then pulse_record port proven:=false detail="container $PULSE_CONTAINER does not run"; return 0; fi
  if [[ $mode != host ]]; then pulse_record port proven:=false detail="container $PULSE_CONTAINER uses network mode $mode, not host: the node's listener is docker's port proxy, not the container"; return 0; fi
  listeners=$(pulse_port_listeners "$PULSE_PORT" "${PULSE_BIND:-}")
  if [[ -z $listeners ]]; then pulse_record port proven:=false detail="no socket listens on port $PULSE_PORT"; return 0; fi
  members=" $(pulse_descendants "$pid" | tr '\n' ' ') "
  pulse_docker_to inside exec "$PULSE_CONTAINER" sh -c 'ls -l /proc/[0-9]*/fd/ 2>/dev/null; echo pulse-exec-ok' || true
  [[ $inside != *pulse-exec-ok* ]] || exec_ok=true
  inside=" $({ grep -o 'socket:\[[0-9]*\]' <<<"$inside" || true; } | tr -dc '0-9\n' | tr '\n' ' ') "
  local -a inodes=()
  mapfile -t inodes < <(cut -f1 <<<"$listeners")
  holders=$(pulse_socket_holders "${inodes[@]}")
  while IFS=$'\t' read -r ino uid addr; do
    owner=unknown words=
    [[ $exec_ok != true || $inside != *" $ino "* ]] || owner=container
    # shellcheck disable=SC2016 # an awk program: its $ are awk's, not bash's
    for p in $("$_PULSE_AWK" -v i="$ino" '$1 == i { print $2 }' <<<"$holders"); do
      if [[ $members == *" $p "* ]] || { [[ -n $cid ]] && grep -qs -- "$cid" "/proc/$p/cgroup"; }; then owner=container; else words+="${words:+, }$(pulse_pid_words "$p")"; fi
    done
    [[ $owner == container || ($exec_ok != true && -z $words) ]] || owner=other
    case $owner in container) n_mine=$((n_mine + 1)) ;; other) n_other=$((n_other + 1)) ;; *) n_unknown=$((n_unknown + 1)) ;; esac
    # shellcheck disable=SC2016 # the single quotes are text in a double-quoted string: the $ there does expand
    pulse_record port-listener inode="$ino" uid:="$uid" address="$addr" owner="$owner" holders="${words:-no process this user can see (sudo ss -ltnp 'sport = :$PULSE_PORT' names it)}"
  done <<<"$listeners"
  if ((n_other > 0)); then pulse_record port proven:=false shared:=true detail="$n_other of the sockets on port $PULSE_PORT are not container $PULSE_CONTAINER's"
  elif ((n_unknown > 0)); then pulse_record port proven:=false detail="docker exec could not list the sockets of $PULSE_CONTAINER and $n_unknown socket(s) on port $PULSE_PORT are held by no process this user can see"
  else pulse_record port proven:=true detail="every socket on port $PULSE_PORT ($n_mine) is container $PULSE_CONTAINER's (pid $pid)$([[ $exec_ok == true ]] && printf ', as docker exec lists them')"
  fi
}
port_proof

# The key must not get lost on the way (carry-over, recipe): when the old .env (this deploy's backup, else the
# current file) or the current one has an API_KEY, an unauthenticated GET must not be served.
old_env="$(dirname -- "$PULSE_ENV_PATH")/.env.pulse-bak-${PULSE_STAMP:-}"
[[ -n ${PULSE_STAMP:-} && -f $old_env ]] || old_env=$PULSE_ENV_PATH
key_now=$PULSE_API_KEY_VALUE
pulse_api_key "$old_env"
if [[ -n $PULSE_API_KEY_VALUE || -n $key_now ]]; then
  code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 "http://$host:$PULSE_PORT/v1/models" </dev/null 2>/dev/null) || true
  [[ $code =~ ^[0-9]{3}$ ]] || code=000
  pulse_record auth keyExpected:=true unauthenticatedStatus:="$code"
fi
PULSE_API_KEY_VALUE=$key_now
unset key_now

# The container log and this deploy's start log are read as one stream, never copied (a 5 GB docker log must not
# cost 5 GB of /tmp on every deploy): one awk pass keeps the first KV cache size and concurrency lines (the same line
# in current vLLM; cut to 1000 bytes) and which proof texts occur, and stops reading once it has them all. Its output is bounded: one line per finding.
scan_logs() {
  # The whole log, which takes longer than a question on a large one (awk stops reading once it has its lines).
  pulse_docker --within 180 logs "$PULSE_CONTAINER" 2>&1 || true
  [[ -z $PULSE_LOG_PATH || ! -r $PULSE_LOG_PATH ]] || cat -- "$PULSE_LOG_PATH" 2>/dev/null || true
}
# shellcheck disable=SC2016 # an awk program: its $ are awk's, not bash's
findings=$(scan_logs | "$_PULSE_AWK" '
  BEGIN { n = split(ENVIRON["PULSE_PROOFS"], proof, "\n"); left = n; for (i = 1; i <= n; i++) if (proof[i] == "") left-- }
  !kv && /KV cache size: [0-9,]+ tokens/ { kv = 1; print "kv\t" substr($0, 1, 1000) }
  !conc && /Maximum concurrency for [0-9,]+ tokens per request/ { conc = 1; print "conc\t" substr($0, 1, 1000) }
  {
    for (i = 1; i <= n; i++) if (proof[i] != "" && !(i in seen) && index($0, proof[i])) { seen[i] = 1; left--; print "proof\t" i }
    if (kv && conc && left == 0) exit
  }') || true
kv=$(sed -n 's/^kv\t//p' <<<"$findings" | head -n 1)
[[ -z $kv ]] || pulse_record kv-cache line="$kv"
conc=$(sed -n 's/^conc\t//p' <<<"$findings" | head -n 1)
[[ -z $conc ]] || pulse_record kv-concurrency line="$conc"
i=0
while IFS= read -r proof; do
  i=$((i + 1))
  [[ -n $proof ]] || continue
  found=false
  ! grep -qx "proof	$i" <<<"$findings" || found=true
  pulse_record proof text="$proof" found:="$found"
done <<<"${PULSE_PROOFS:-}"
