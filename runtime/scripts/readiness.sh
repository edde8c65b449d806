# readiness: one GET /v1/models on the node. The API key is read from the node .env (never executed) and goes
# to curl on stdin as a header, so it is never on a command line. Exit 0 when HTTP 200, 13 otherwise.
# A container of this start that already exited will never answer: the script exits 11 with a container record (the
# controller makes it "not ready" for good, runtime/steps/checks.ts), so the deploy fails and compensates now instead
# of polling until the readiness timeout (READY_TIMEOUT_S + grace).
# A 401 means the server wants a key the node .env does not give: exit 14 (unauthorized), never "not ready".
# A container that could not start at all (a failing OCI hook such as nvidia-container-runtime-hook with a broken
# driver, a missing entrypoint) stays `created` with State.Error set and will never answer either: exit 11 at once,
# naming State.Error. A Docker daemon that does not answer is exit 15, never "no container yet".
# Inputs: PULSE_ENV_PATH, PULSE_PORT, PULSE_PROBE_HOST, PULSE_SERVED_MODEL_NAME, PULSE_CONTAINER, PULSE_SEEN_ID and
# PULSE_SEEN_RESTARTS (optional), PULSE_NO_LOG_TAIL=1 (the wait follows the log already: no tail). Records: readiness;
# container{id,status,exitCode,restartCount,startedAt,error} and log-tail{text} (the container log's last lines, at
# most 4 KB) when no 200; crash-loop{container,restartCount,ended} when its restart policy restarted it (the one
# change this probe makes: it ends the loop, see below).
command -v curl >/dev/null 2>&1 || pulse_fail "$PULSE_EXIT_PRECONDITION" 'curl is not on PATH on the node'
pulse_api_key "$PULSE_ENV_PATH"
host=$PULSE_PROBE_HOST
[[ $host != *:* ]] || host="[$host]"
url="http://$host:$PULSE_PORT/v1/models"
code=$(pulse_curl_auth -s -o /dev/null -w '%{http_code}' --max-time 10 "$url" 2>/dev/null) || true
[[ $code =~ ^[0-9]{3}$ ]] || code=000
case $code in
  200) pulse_record readiness ready:=true httpStatus:=200 detail="GET $url: 200" ;;
  000) pulse_record readiness ready:=false httpStatus:=null detail="GET $url: no answer (connection refused or timed out)" ;;
  401) pulse_record readiness ready:=false httpStatus:=401 detail="GET $url: 401 Unauthorized" ;;
  403) pulse_record readiness ready:=false httpStatus:=403 detail="GET $url: 403 (the server wants an API key; is API_KEY in the node .env right?)" ;;
  *) pulse_record readiness ready:=false httpStatus:="$code" detail="GET $url: $code" ;;
esac
# Without a 200 the container says whether waiting can still help (one docker call, only then). It fails fast, as a
# precondition with docker's state and exit code in words, when it exited or is dead (it will never answer), when it
# is another container than the one this wait saw first (replaced), or when its restart count grew since (its
# restart policy restarts a crashing server: each run dies before it serves). PULSE_SEEN_ID/PULSE_SEEN_RESTARTS are
# what the first probe of the wait reported (the wait keeps them in its heartbeat, so a resumed wait still has them).
if [[ $code != 200 && -n ${PULSE_CONTAINER:-} ]]; then
  # State.Error goes last: read gives the last name the rest of the line, spaces and all.
  pulse_docker_to st container inspect --format '{{.Id}} {{.State.Status}} {{.State.ExitCode}} {{.RestartCount}} {{.State.OOMKilled}} {{.State.StartedAt}} {{.State.Error}}' "$PULSE_CONTAINER" ||
    { st=; pulse_docker_answers || pulse_fail_docker_down "readiness of container $PULSE_CONTAINER"; }
  read -r cid state ecode restarts oom started err <<<"$st" || true
  if [[ -n ${cid:-} && $restarts =~ ^[0-9]+$ && $ecode =~ ^[0-9]+$ ]]; then
    pulse_record container id="$cid" status="$state" exitCode:="$ecode" restartCount:="$restarts" startedAt="${started:-}" error="$err"
    case $state in
      exited | dead) pulse_fail "$PULSE_EXIT_PRECONDITION" "container $PULSE_CONTAINER is $state ($(pulse_exit_words "$ecode" "$oom")) before /v1/models answered${err:+; State.Error: $err}" ;;
      created)
        # docker run creates, then starts: a `created` container is only on its way while State.Error is empty. Once
        # the start failed, docker leaves it created, never started (StartedAt 0001-01-01), with ExitCode 127 or 128
        # and the cause in State.Error; no restart policy ever restarts a container that never ran.
        if [[ -n $err ]]; then
          pulse_fail "$PULSE_EXIT_PRECONDITION" "container $PULSE_CONTAINER could not start (docker left it created, never started, exit code $ecode): State.Error: $err"
        fi ;;
    esac
    if [[ -n ${PULSE_SEEN_ID:-} && $cid != "$PULSE_SEEN_ID" ]]; then
      pulse_fail "$PULSE_EXIT_PRECONDITION" "container $PULSE_CONTAINER was replaced during the readiness wait (id ${PULSE_SEEN_ID:0:12} → ${cid:0:12}): the server this deploy started is gone"
    fi
    if [[ -n ${PULSE_SEEN_ID:-} && ${PULSE_SEEN_RESTARTS:-} =~ ^[0-9]+$ ]] && ((restarts > PULSE_SEEN_RESTARTS)); then
      # docker resets ExitCode to 0 when the new run starts (moby State.setRunning): the last exit is known only while
      # the container waits to restart.
      last=
      [[ $state != restarting ]] || last="; last $(pulse_exit_words "$ecode" "$oom")"
      # A crash loop is ended here, by the step that found it, not left to run until someone runs down: each new run
      # loads the weights again into GPU memory the rollback or the next up needs, and fills the log. The policy
      # goes first (docker update: a daemon restart must not revive an `always` container), then docker stop cancels
      # a restart that is already due and ends a run that is loading. The container stays, exited, with its log
      # (pulse model logs, docker logs), until down or the next up removes it. docker stop waits up to 10 s.
      ended="pulse ended the loop (docker update --restart=no, docker stop); the container stays, stopped, with its log until pulse model down or the next up removes it"
      if ! pulse_docker update --restart=no "$cid" >/dev/null 2>&1 || ! pulse_docker --within $((10 + PULSE_DOCKER_BOUND_S)) stop -t 10 "$cid" >/dev/null 2>&1; then
        ended="pulse could not end the loop (docker update --restart=no or docker stop failed): it goes on until pulse model down stops it"
      fi
      pulse_record crash-loop container="$PULSE_CONTAINER" restartCount:="$restarts" ended="$ended"
      pulse_fail "$PULSE_EXIT_PRECONDITION" "container $PULSE_CONTAINER restarted during the readiness wait (restart count $PULSE_SEEN_RESTARTS → $restarts, now $state$last): its restart policy restarts a server that dies before it serves; $ended"
    fi
  fi
fi
# The server's own phase (loading weights, compiling, ...): the last few KB of its log, never the whole log (docker
# reads a --tail from the end of the file), as one record the controller parses (runtime/vllm/phase.ts). Like all
# output of a script it leaves the node through pulse_redact, so a secret in a log line never does.
# A wait that follows the log (activities/log-watch.ts) reads the phase from the stream and skips it: a refused probe
# then ends sooner, and the wait's next probe (on the startup line) comes sooner.
if [[ $code != 200 && $code != 401 && -n ${cid:-} && ${PULSE_NO_LOG_TAIL:-0} != 1 ]]; then
  tail=$(pulse_docker logs --tail 40 "$PULSE_CONTAINER" 2>&1 | tail -c 4096) || true
  [[ -z $tail ]] || pulse_record log-tail text="$tail"
fi
# vLLM answers 401 only once it serves, and only when its key (--api-key, else VLLM_API_KEY) is not the one sent:
# waiting cannot change that, so it is its own failure now, not "not ready" until the readiness timeout.
if [[ $code == 401 ]]; then
  if [[ -n ${PULSE_API_KEY_VALUE:-} ]]; then why="the API_KEY in $PULSE_ENV_PATH is not the server's key"; else why="$PULSE_ENV_PATH sets no API_KEY"; fi
  pulse_fail "$PULSE_EXIT_UNAUTHORIZED" "GET $url: 401 Unauthorized ($why; vLLM reads --api-key, else VLLM_API_KEY in the container)"
fi
[[ $code == 200 ]] || exit "$PULSE_EXIT_NOT_READY"
