# verify: what the server really runs. /v1/models (sent back base64: the controller parses the JSON), the KV
# cache lines of the container log, and each pulse-proof text (the controller turns a missing one into a warning).
# vLLM logs the KV cache in one line (current) or as a size line and a concurrency line (older releases), each
# with a process prefix; the controller joins them (runtime/steps/kv-cache.ts).
# Inputs: PULSE_ENV_PATH, PULSE_PORT, PULSE_PROBE_HOST, PULSE_CONTAINER, PULSE_PROOFS (one per line),
# PULSE_LOG_PATH (may be empty), PULSE_STAMP. Records: models{httpStatus,body_b64}, auth{keyExpected,
# unauthenticatedStatus}, kv-cache{line}, kv-concurrency{line}, proof{text,found}.
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
  docker logs "$PULSE_CONTAINER" 2>&1 </dev/null || true
  [[ -z $PULSE_LOG_PATH || ! -r $PULSE_LOG_PATH ]] || cat -- "$PULSE_LOG_PATH" 2>/dev/null || true
}
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
