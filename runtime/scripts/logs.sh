# logs: the container's log (docker logs) or a deploy's start log (the recipe's logs/pulse-up-*.log), read-only.
# Every line is redacted raw, before it is encoded (pulse_redact_raw), then leaves the node as a `log` record through
# pulse_redact like all output (the prelude installed it with the .env files of every recipe in PULSE_RECIPES), so
# API_KEY and HF_TOKEN values never reach the controller, in any form the log prints them.
# Inputs:
#   PULSE_RECIPES     one recipe per line: name<TAB>dir<TAB>container (the first one whose container runs is read;
#                     else the first whose container exists; else the first)
#   PULSE_LOG_SOURCE  container | deploy
#   PULSE_LOG_TAIL    the last N lines, or `all`
#   PULSE_LOG_FOLLOW  1: go on with new lines (docker logs -f ends when the container stops; tail -f on Ctrl-C)
#   PULSE_LOG_SINCE   container only, optional: docker logs --since (a duration such as 10m, or a UTC time)
#   PULSE_LOG_TIMESTAMPS  container only, 1: docker logs --timestamps (each line starts with its RFC 3339 time)
#   PULSE_LOG_PATH    deploy only, optional: the start log the controller's node state names; else the newest
#                     logs/pulse-up-*.log of the chosen recipe
#   PULSE_LOG_SEGMENTS  1: one record per `\r`-separated segment of a line (a tqdm bar's updates), so the readiness
#                     wait's follower reads the latest update as the probe's tail does (runtime/vllm/phase.ts)
# Records: log-source{source,recipe,name,running,status}, then log{line} per line (in order), then
# log-end{exit,ended} (ended, after a follow: removed | replaced | running | docker-down | <status>:<exit code>).
# Exit 11 (precondition) when there is no such container or start log; 15 when the Docker daemon does not answer.
[[ $PULSE_LOG_TAIL =~ ^([0-9]+|all)$ ]] || pulse_fail "$PULSE_EXIT_PRECONDITION" "--tail: '$PULSE_LOG_TAIL' is not a number"
since_re='^([0-9]+s|[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]+)?)?(Z|[+-][0-9]{2}:[0-9]{2})?)?)$'
[[ -z ${PULSE_LOG_SINCE:-} || $PULSE_LOG_SINCE =~ $since_re ]] || pulse_fail "$PULSE_EXIT_PRECONDITION" "--since: '$PULSE_LOG_SINCE' is not a duration or a time"

pick_name='' pick_dir='' pick_container='' pick_status=absent
while IFS=$'\t' read -r r_name r_dir r_container; do
  [[ -n $r_name ]] || continue
  pulse_docker_to st container inspect --format '{{.State.Status}}' "$r_container" || st=
  if [[ $st == running ]]; then pick_name=$r_name pick_dir=$r_dir pick_container=$r_container pick_status=$st; break; fi
  if [[ -n $st && $pick_status == absent ]]; then pick_name=$r_name pick_dir=$r_dir pick_container=$r_container pick_status=$st; fi
  if [[ -z $pick_name ]]; then pick_name=$r_name pick_dir=$r_dir pick_container=$r_container; fi
done <<<"${PULSE_RECIPES:-}"
[[ -n $pick_name ]] || pulse_fail "$PULSE_EXIT_PRECONDITION" 'the node has no recipe'
# No container found: absent only when the daemon answered. A daemon that does not answer has no container log to
# give (exit 15); a deploy's start log is a file and is still read, its container state `unknown`.
if [[ $pick_status == absent ]] && ! pulse_docker_answers; then
  [[ $PULSE_LOG_SOURCE == deploy ]] || pulse_fail_docker_down "docker logs $pick_container"
  pick_status=unknown
fi

# Each line as one record: its secret values redacted as the log wrote them (pulse_redact_raw: raw, JSON- or
# backslash-escaped), then JSON-escaped by awk (one process for the whole stream, not one per line; `&&` doubles a
# backslash in mawk and gawk alike); other control characters (a progress bar's carriage returns, colour codes) are
# dropped, as the printer would drop them anyway. The record then leaves through the prelude's filter as well.
as_records() {
  # shellcheck disable=SC2016 # an awk program: its $ are awk's, not bash's
  pulse_redact_raw | env -i "$_PULSE_AWK" "${_PULSE_AWK_LINES[@]}" -v segments="${PULSE_LOG_SEGMENTS:-0}" '{
    n = split($0, seg, "\r")
    if (segments != 1) {
      # What a terminal shows of a line that carriage returns rewrote (the updates of a tqdm bar): each segment writes
      # over the start of what stands, so the last state of the line is left, not every update run together.
      shown = ""
      for (i = 1; i <= n; i++) shown = seg[i] substr(shown, length(seg[i]) + 1)
      seg[1] = shown; n = 1
    }
    for (i = 1; i <= n; i++) {
      s = seg[i]
      if (segments == 1 && s == "") continue
      gsub(/\\/, "&&", s); gsub(/"/, "\\\"", s); gsub(/\t/, "\\t", s); gsub(/[\001-\037\177]/, "", s)
      printf "@pulse {\"kind\":\"log\",\"line\":\"%s\"}\n", s
    }
    fflush()
  }'
}

running=false
[[ $pick_status != running ]] || running=true
if [[ $PULSE_LOG_SOURCE == deploy ]]; then
  log=${PULSE_LOG_PATH:-}
  # The newest by name: the name's stamp is the deploy's UTC start time (start.sh), mtimes can tie.
  if [[ -z $log ]]; then
    # A glob sorts its names (LC_ALL=C): the last one that matched is the newest.
    logs=("$pick_dir"/logs/pulse-up-*.log)
    [[ ! -e ${logs[-1]} ]] || log=${logs[-1]}
  fi
  [[ -n $log && -r $log ]] || pulse_fail "$PULSE_EXIT_PRECONDITION" "no deploy start log on the node (${log:-none of $pick_dir/logs/pulse-up-*.log})"
  pulse_record log-source source=deploy recipe="$pick_name" name="$log" running:="$running" status="$pick_status"
  n=$PULSE_LOG_TAIL
  [[ $n != all ]] || n=+1
  if [[ ${PULSE_LOG_FOLLOW:-0} == 1 ]]; then tail -n "$n" -f -- "$log" </dev/null | as_records
  else tail -n "$n" -- "$log" </dev/null | as_records; fi
  pulse_record log-end exit:=0
  exit 0
fi

[[ $pick_status != absent ]] || pulse_fail "$PULSE_EXIT_PRECONDITION" "container $pick_container does not exist on the node (recipe $pick_name)"
pulse_record log-source source=container recipe="$pick_name" name="$pick_container" running:="$running" status="$pick_status"
args=(--tail "$PULSE_LOG_TAIL")
[[ ${PULSE_LOG_FOLLOW:-0} != 1 ]] || args+=(--follow)
[[ -z ${PULSE_LOG_SINCE:-} ]] || args+=(--since "$PULSE_LOG_SINCE")
[[ ${PULSE_LOG_TIMESTAMPS:-0} != 1 ]] || args+=(--timestamps)
pulse_docker_to followed_id container inspect --format '{{.Id}}' "$pick_container" || followed_id=
# stdout and stderr of the container both (vLLM's logger writes to stdout, uvicorn to stderr).
set +o pipefail
# The stream has no bound (a follow, or --tail all of a large log, lasts as long as the user wants it): the inspect
# above, bounded, has just seen the daemon answer.
pulse_docker --within 0 logs "${args[@]}" "$pick_container" 2>&1 | as_records
code=${PIPESTATUS[0]}
set -o pipefail
# Why a follow ended, for the one line the controller prints: the container stopped (its exit code), was removed, or
# was replaced by another of the same name (a deploy's start.sh runs a new one). docker logs -f ends when the container
# is killed, a moment before `docker rm -f` has removed it (exit 1 then): its state settles within a second or two.
ended=
if [[ ${PULSE_LOG_FOLLOW:-0} == 1 ]]; then
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    pulse_docker_to now container inspect --format '{{.Id}} {{.State.Status}} {{.State.ExitCode}}' "$pick_container" || now=
    read -r now_id now_status now_exit <<<"$now" || true
    [[ -n $now && $now_id == "$followed_id" && $now_status == removing ]] || break
    sleep 0.2
  done
  [[ $_pulse_docker_silent == true ]] || _pulse_docker_asked=false # the daemon's answer from before the follow is stale now
  if [[ -z $now ]] && ! pulse_docker_answers; then ended=docker-down
  elif [[ -z $now ]]; then ended=removed
  elif [[ $now_id != "$followed_id" ]]; then ended=replaced
  elif [[ $now_status == running ]]; then ended=running
  else ended="$now_status:$now_exit"; fi
fi
pulse_record log-end exit:="$code" ended="$ended"
[[ $ended != docker-down ]] || pulse_fail_docker_down "docker logs $pick_container"
# A follow whose container went away or stopped under it ended as it should, whatever docker logs said about the
# stream it lost; only a stream that broke while the same container still runs, or a plain read, is a failure.
[[ -z $ended || $ended == running ]] || exit 0
((code == 0)) || pulse_fail "$PULSE_EXIT_PRECONDITION" "docker logs $pick_container ended with exit $code"
