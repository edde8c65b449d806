# drain: one sample of what the running server still has in flight, before pulse stops it (the drain step polls it).
# It reads vLLM's own Prometheus page, GET /metrics: the gauges vllm:num_requests_running and
# vllm:num_requests_waiting (vllm/v1/metrics/loggers.py), summed over their model_name/engine labels. The node .env's
# API_KEY goes to curl on stdin (pulse_curl_auth), never on a command line. Where no page can be read (PULSE_HTTP=0: a
# protected node without --yes; a build without /metrics; no answer) or the page cannot be trusted (a negative, NaN or
# infinite gauge, or not both gauges for the served model: pulse_vllm_gauges) it counts the open client connections on
# the server port instead (preflight's count), and says why. Read-only: a retry or a resumed drain is harmless.
# Inputs: PULSE_RECIPE_DIR, PULSE_CONTAINER, PULSE_PORT, PULSE_PROBE_HOST, PULSE_HTTP (1 or 0).
# Record: drain{source (metrics, connections or not-running), running, waiting, connections, httpStatus,
#               shutdownTimeoutS (--shutdown-timeout in the live .env's EXTRA_VLLM_ARGS, or null), detail}.
env_file=$PULSE_RECIPE_DIR/.env
# A failed inspect is "absent" only when the daemon answers: a daemon that does not fails the drain (exit 15) within
# pulse_docker's bound, so the drain's budget holds whatever docker does.
pulse_docker_to st container inspect --format '{{.State.Status}}' "$PULSE_CONTAINER" ||
  { st=absent; pulse_docker_answers || pulse_fail_docker_down "drain: container $PULSE_CONTAINER not sampled, nothing stopped"; }
[[ -n $st ]] || st=absent
# vLLM's --shutdown-timeout N in the live .env: the server's own drain on SIGTERM, which the stop then waits out.
grace=null
extra=$(pulse_env_get EXTRA_VLLM_ARGS "$env_file" 2>/dev/null) || extra=
if [[ " $extra " =~ [[:space:]]--shutdown-timeout[=[:space:]]+([0-9]+)[[:space:]] ]]; then grace=$((10#${BASH_REMATCH[1]})); fi
if [[ $st != running ]]; then
  pulse_record drain source=not-running running:=0 waiting:=0 connections:=0 httpStatus:=null shutdownTimeoutS:="$grace" detail="container $PULSE_CONTAINER is $st: nothing to drain"
  exit 0
fi
code=null why=
if [[ ${PULSE_HTTP:-1} != 1 ]]; then
  why='protected node without --yes: no HTTP request to the server'
elif ! command -v curl >/dev/null 2>&1; then
  why='curl is not on PATH on the node'
else
  # The gauges for the served model, checked (pulse_vllm_gauges): a page that lies is no page, and falls back.
  read -r code verdict rest <<<"$(pulse_vllm_inflight "$env_file")" || true
  if [[ $verdict == ok ]]; then
    read -r running waiting <<<"$rest"
    pulse_record drain source=metrics running:="$running" waiting:="$waiting" connections:=null httpStatus:="$code" shutdownTimeoutS:="$grace" detail="GET /metrics: $running running, $waiting waiting"
    exit 0
  fi
  why=${rest:-GET /metrics could not be read}
  [[ $code =~ ^[0-9]+$ ]] || code=null
fi
conns=$(pulse_connections "$PULSE_PORT")
pulse_record drain source=connections running:=null waiting:=null connections:="$conns" httpStatus:="$code" shutdownTimeoutS:="$grace" detail="$why; counted $conns open client connection(s) on port $PULSE_PORT instead"
