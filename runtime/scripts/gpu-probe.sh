# gpu-probe: runs the node's gpuProbe command from nodes.json (it starts a GPU container, so status runs it only
# when asked, and never on a protected node without --yes). The command was checked by the nodes.json schema.
# Inputs: PULSE_GPU_PROBE (the command), PULSE_GPU_PROBE_TIMEOUT_S (default 300)
# Records: gpu-probe exitCode output (the last 2000 bytes of its stdout+stderr)
[[ -n ${PULSE_GPU_PROBE:-} ]] || pulse_fail "$PULSE_EXIT_PRECONDITION" "no gpuProbe command for this node"
_probe_out=$(mktemp)
trap 'rm -f "$_probe_out"' EXIT
rc=0
timeout "${PULSE_GPU_PROBE_TIMEOUT_S:-300}" bash -c "$PULSE_GPU_PROBE" </dev/null >"$_probe_out" 2>&1 || rc=$?
pulse_record gpu-probe exitCode:="$rc" output="$(tail -c 2000 "$_probe_out")"
