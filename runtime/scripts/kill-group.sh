# kill-group: stop the process group of a cancelled step (TERM, then KILL after ~2 s). Runs over the same
# connection as the step. Input: PULSE_KILL_PGID.
pg=${PULSE_KILL_PGID:-}
[[ $pg =~ ^[0-9]+$ && $pg -gt 1 ]] || pulse_fail "$PULSE_EXIT_PRECONDITION" "kill-group: invalid process group '$pg'"
if kill -0 -- "-$pg" 2>/dev/null; then
  kill -TERM -- "-$pg" 2>/dev/null || true
  for _ in $(seq 1 20); do
    kill -0 -- "-$pg" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL -- "-$pg" 2>/dev/null || true
  pulse_record killed pgid:="$pg" wasRunning:=true
else
  pulse_record killed pgid:="$pg" wasRunning:=false
fi
