# stop: run the recipe's stop.sh from the recipe dir (it reads the current .env, so this runs before write-env),
# then make sure the container is gone (docker rm -f when it lingers). A failing stop.sh is reported (exit 1)
# after the container is removed anyway. Inputs: PULSE_RECIPE_DIR, PULSE_RECIPE_STOP, PULSE_CONTAINER.
# Record: stopped{wasRunning,containerGone,stopExit}.
stop=$(pulse_abs "$PULSE_RECIPE_STOP")
[[ -f $stop ]] || pulse_fail "$PULSE_EXIT_PRECONDITION" "stop script $stop is missing"
exists() { docker container inspect "$PULSE_CONTAINER" >/dev/null 2>&1; }
was=false
[[ $(docker container inspect --format '{{.State.Running}}' "$PULSE_CONTAINER" 2>/dev/null || true) != true ]] || was=true

# stop.sh output is log, not records: it goes to stderr so it can never forge an @pulse line.
rc=0
(cd "$PULSE_RECIPE_DIR" && env -i HOME="${HOME:-/}" PATH="$PATH" bash "$stop" </dev/null 1>&2) || rc=$?

if exists; then
  docker rm -f "$PULSE_CONTAINER" >/dev/null 2>&1 || true
  for _ in $(seq 1 50); do exists || break; sleep 0.2; done
fi
gone=true
! exists || gone=false
pulse_record stopped wasRunning:="$was" containerGone:="$gone" stopExit:="$rc"
((rc == 0)) || pulse_fail 1 "stop.sh exited $rc (container gone: $gone)"
[[ $gone == true ]] || pulse_fail "$PULSE_EXIT_TEMPORARY" "container $PULSE_CONTAINER is still there after docker rm -f"
