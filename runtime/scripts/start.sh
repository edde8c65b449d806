# start: launch the recipe's start.sh in a new session (setsid) with a clean environment (env -i HOME PATH), so
# the .env alone sets the recipe keys and a lost ssh link cannot stop it. Never `--no-launch`.
# Idempotent per deploy: an atomic mkdir of logs/.pulse-start-<deploy key> decides whether this deploy already
# launched, so a retried or resumed start never starts twice.
# Inputs: PULSE_RECIPE_DIR, PULSE_RECIPE_START, PULSE_STAMP, PULSE_DEPLOY_KEY, PULSE_PORT, PULSE_BIND. Records:
# start{started,log,pid}; port-busy{port,listeners} when another server listens on the port before the launch.
start=$(pulse_abs "$PULSE_RECIPE_START")
[[ -f $start ]] || pulse_fail "$PULSE_EXIT_PRECONDITION" "start script $start is missing"
[[ $PULSE_DEPLOY_KEY =~ ^[0-9a-f]+$ ]] || pulse_fail "$PULSE_EXIT_PRECONDITION" 'invalid deploy key'
logs="$PULSE_RECIPE_DIR/logs"
mkdir -p -- "$logs" || pulse_fail "$PULSE_EXIT_PRECONDITION" "cannot create $logs"
marker="$logs/.pulse-start-$PULSE_DEPLOY_KEY"
# Markers of deploys older than 30 days can no longer be retried: prune them so logs/ does not fill up.
find "$logs" -maxdepth 1 -name '.pulse-start-*' -type d -mtime +30 -exec rm -rf -- {} + 2>/dev/null || true
log="$logs/pulse-up-$PULSE_STAMP.log"

cd -- "$PULSE_RECIPE_DIR" || pulse_fail "$PULSE_EXIT_PRECONDITION" "cannot enter $PULSE_RECIPE_DIR"
trap '' HUP # a dropped link between the marker and the launch must not leave a marker without a server
if ! mkdir -- "$marker" 2>/dev/null; then
  prev=$(cat -- "$marker/log" 2>/dev/null || true)
  pulse_record start started:=false log="${prev:-$log}"
  exit 0
fi
# A failure before the launch (full disk) removes the marker again, so a retry can still start.
launched=false
trap '[[ $launched == true ]] || rm -rf -- "$marker"' EXIT
printf '%s\n' "$log" >"$marker/log"
# The port must be free before the launch (the old server is stopped and its memory freed by now): vLLM binds with
# SO_REUSEPORT, so a server left listening there would share the port with the new one and could answer its
# readiness and verify. A precondition failure: the deploy compensates, as after any failure past the stop.
if [[ -n ${PULSE_PORT:-} ]]; then
  busy=$(pulse_port_words "$PULSE_PORT" "${PULSE_BIND:-}")
  if [[ -n $busy ]]; then
    pulse_record port-busy port:="$PULSE_PORT" listeners="$busy"
    pulse_fail "$PULSE_EXIT_PRECONDITION" "port $PULSE_PORT is in use before the start: ${busy//$'\n'/; }; a vLLM started now would share it (SO_REUSEPORT) and the old server could answer for it: stop that server first"
  fi
fi
setsid nohup env -i HOME="${HOME:-/}" PATH="$PATH" bash "$start" </dev/null >>"$log" 2>&1 &
pid=$!
launched=true
printf '%s\n' "$pid" >"$marker/pid"
pulse_record start started:=true log="$log" pid:="$pid"
