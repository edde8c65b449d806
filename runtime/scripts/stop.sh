# stop: run the recipe's stop.sh from the recipe dir (it reads the current .env, so this runs before write-env),
# then make sure the container is gone (docker rm -f when it lingers). A failing stop.sh is reported (exit 1)
# after the container is removed anyway. Inputs: PULSE_RECIPE_DIR, PULSE_RECIPE_STOP, PULSE_CONTAINER; with
# PULSE_PORT and PULSE_PROBE_HOST (a worker's stop step) also the server's address.
# Record: stopped{wasRunning,containerGone,stopExit,before,exitCode,exitMeaning,after,atSignal,atSignalSource,atSignalDetail}.
# atSignal: the requests in flight right before stop.sh sends the signal, read from vLLM's own gauges (GET /metrics,
# checked as the drain checks them), else the open client connections: the drain's last sample may be a second old,
# and a request that begins after it is cut all the same (vLLM's default --shutdown-timeout 0 aborts every request
# in flight at once). null: nothing ran, or no address was given.
# Docker's states (moby daemon/stop.go, kill.go, delete.go): a paused container gets the stop signal and is then
# unpaused by docker stop (and killed then unpaused by rm -f), so it needs nothing more; a restarting one has its
# restart cancelled; `removing` is a removal already in progress (rm -f fails meanwhile: wait for it); `dead` is a
# removal that failed (rm -f again). `docker wait`, started before stop.sh, reads the exit code the server stopped
# with (stop.sh removes the container, so no inspect can read it afterwards).
stop=$(pulse_abs "$PULSE_RECIPE_STOP")
[[ -f $stop ]] || pulse_fail "$PULSE_EXIT_PRECONDITION" "stop script $stop is missing"
# `docker container inspect --format` prints an empty line for a container that does not exist: only its exit
# status says absent.
# state_of sets `state` and `oom` in this shell (never in a $(...): the daemon's answer is kept, so a daemon that does
# not answer costs one bound, not one per question); state `unknown` when it does not answer: the stop then fails with
# exit 15, never "container gone".
state=absent oom=false
state_of() {
  local out
  if pulse_docker_to out container inspect --format '{{.State.Status}} {{.State.OOMKilled}}' "$PULSE_CONTAINER"; then
    read -r state oom <<<"$out" || true
  else
    state=absent oom=false
    pulse_docker_answers || state=unknown
  fi
}
state_of
before=$state oom_before=$oom
[[ $before != unknown ]] || pulse_fail_docker_down "stop: container $PULSE_CONTAINER not touched, stop.sh not run"
was=false
case $before in running | paused | restarting) was=true ;; esac
waitf=$(mktemp)
waiter=
# A step that fails (a daemon that stops answering mid-stop) leaves no docker wait behind, blocked on that daemon.
trap 'rm -f "$waitf"; [[ -z $waiter ]] || kill "$waiter" 2>/dev/null || true' EXIT
if [[ $was == true ]]; then
  # Bounded by the script itself (killed after the removal below), not by pulse_docker's bound: stop.sh may take long.
  pulse_docker --within 0 wait "$PULSE_CONTAINER" >"$waitf" 2>/dev/null &
  waiter=$!
fi

# What the signal will cut, read as late as pulse can: the next thing is stop.sh, whose docker stop sends it.
at=null at_source=null at_detail=
if [[ $was == true && -n ${PULSE_PORT:-} ]]; then
  at_source=metrics
  read -r _ verdict rest <<<"$(pulse_vllm_inflight "$PULSE_RECIPE_DIR/.env" 2)" || true
  if [[ $verdict == ok ]]; then
    read -r running waiting <<<"$rest"
    at=$((running + waiting)) at_detail="GET /metrics: $running running, $waiting waiting"
  else
    at_source=connections at=$(pulse_connections "$PULSE_PORT")
    at_detail="${rest:-GET /metrics could not be read}; counted $at open client connection(s) on port $PULSE_PORT instead"
  fi
fi

# stop.sh output is log, not records: it goes to stderr so it can never forge an @pulse line.
# The recipe's stop.sh calls docker itself, with no bound: while it runs, the daemon is asked for its version every
# 2 s (pulse_docker, within the bound); a daemon that does not answer ends the recipe's script and all it started,
# and the step fails docker-down instead of waiting on a frozen daemon until the step's timeout, the lock held.
rc=0
(cd "$PULSE_RECIPE_DIR" && exec env -i HOME="${HOME:-/}" PATH="$PATH" bash "$stop" </dev/null 1>&2) &
recipe=$!
asked=${EPOCHSECONDS}
while kill -0 "$recipe" 2>/dev/null; do
  if ((EPOCHSECONDS - asked >= 2)); then
    if ! pulse_docker_alive; then
      pulse_kill_tree "$recipe"
      wait "$recipe" 2>/dev/null || true
      pulse_fail_docker_down "stop: the recipe's $PULSE_RECIPE_STOP was ended while it waited on docker"
    fi
    asked=${EPOCHSECONDS}
  fi
  sleep 0.1
done
wait "$recipe" || rc=$?

# What is left: wait out a removal in progress, remove anything else (a dead one again), for up to 10 s.
now=absent
for i in $(seq 1 50); do
  state_of
  now=$state
  [[ $now != absent ]] || break
  [[ $now != unknown ]] || pulse_fail_docker_down "stop: stop.sh exited $rc; whether container $PULSE_CONTAINER is gone is unknown"
  # rm -f kills the server and removes its layer: a little longer than a question.
  if [[ $now != removing ]] && ((i % 5 == 1)); then pulse_docker --within 30 rm -f "$PULSE_CONTAINER" >/dev/null 2>&1 || true; fi
  sleep 0.2
done
gone=true
[[ $now == absent ]] || gone=false

code=null meaning=
if [[ -n $waiter ]]; then
  for _ in $(seq 1 25); do kill -0 "$waiter" 2>/dev/null || break; sleep 0.2; done
  kill "$waiter" 2>/dev/null || true
  wait "$waiter" 2>/dev/null || true
  code=$(head -n 1 "$waitf" | tr -d '[:space:]')
  [[ $code =~ ^[0-9]+$ ]] || code=null
  [[ $code == null ]] || meaning=$(pulse_exit_words "$code" "$oom_before")
fi
pulse_record stopped wasRunning:="$was" containerGone:="$gone" stopExit:="$rc" before="$before" exitCode:="$code" exitMeaning="$meaning" after="$now" atSignal:="$at" atSignalSource:="$at_source" atSignalDetail="$at_detail"
how=${meaning:+; it stopped with $meaning}
((rc == 0)) || pulse_fail 1 "stop.sh exited $rc (container was $before, gone: $gone$how)"
if [[ $gone != true ]]; then
  case $now in
    removing) pulse_fail "$PULSE_EXIT_TEMPORARY" "container $PULSE_CONTAINER is still being removed by docker (state removing) after 10 s" ;;
    dead) pulse_fail "$PULSE_EXIT_TEMPORARY" "container $PULSE_CONTAINER is dead: docker failed to remove it (docker rm -f retried); see docker container inspect --format '{{.State.Error}}' $PULSE_CONTAINER" ;;
    *) pulse_fail "$PULSE_EXIT_TEMPORARY" "container $PULSE_CONTAINER is still there ($now) after docker rm -f" ;;
  esac
fi
