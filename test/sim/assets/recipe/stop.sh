#!/usr/bin/env bash
# Simulated recipe stop.sh (test/sim): reads .env for the container name, stops and removes the container.
# It returns before the memory is free, like the real one. SIM_STATE/stop-mode makes it fail, hang, or return
# without stopping anything (so pulse's own "container gone" check is tested).
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SIM_STATE="@SIM_STATE@"
echo "$(date -u +%Y-%m-%dT%H:%M:%S.%NZ) pid=$$ args=$*" >>"$SIM_STATE/stop-calls"
TP1_CONTAINER_NAME=vllm-qwen38
if [[ -f "$HERE/.env" ]]; then
  set -a
  # shellcheck disable=SC1091
  source "$HERE/.env"
  set +a
fi
case "$(cat "$SIM_STATE/stop-mode" 2>/dev/null || echo ok)" in
  fail) echo "stop.sh: simulated failure" >&2; exit 1 ;;
  hang) exec sleep 86400 ;;
  noop) echo "stop.sh: (simulated) did nothing"; exit 0 ;;
esac
if docker inspect --format '{{.State.Status}}' "$TP1_CONTAINER_NAME" >/dev/null 2>&1; then
  docker stop -t 10 "$TP1_CONTAINER_NAME" >/dev/null
  docker rm "$TP1_CONTAINER_NAME" >/dev/null
  echo "stop.sh: stopped $TP1_CONTAINER_NAME"
else
  echo "stop.sh: $TP1_CONTAINER_NAME is not running"
fi
