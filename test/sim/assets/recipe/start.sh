#!/usr/bin/env bash
# Simulated single-Spark Qwen3.8-Flash-Next recipe start.sh (pulse test simulator, test/sim).
# Behaves like the real recipe where pulse depends on it: .env over built-in defaults that differ from .env.sample,
# EXTRA_DOCKER_ARGS unquoted in a generated launch script, API_KEY as --api-key, readiness polled on localhost,
# the container removed after READY_TIMEOUT_S. The sim bookkeeping (call counter, --no-launch marker) goes to
# SIM_STATE, which startSim substitutes when it installs this file.
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SIM_STATE="@SIM_STATE@"
echo "$(date -u +%Y-%m-%dT%H:%M:%S.%NZ) pid=$$ args=$*" >>"$SIM_STATE/start-calls"

NO_LAUNCH=0
if [[ "${1:-}" == "--no-launch" ]]; then
  # The real mode starts helper containers and writes .last_launch.sh; pulse must never call it.
  touch "$SIM_STATE/no-launch-called"
  NO_LAUNCH=1
fi

# Built-in defaults: deliberately different from .env.sample, so a key missing from .env changes the server.
IMAGE="vllm-qwen38:spark-tuning-a41f2e7"
MODEL="Qwen/Qwen3.8-Flash-Next"
SERVED_MODEL_NAME="qwen38-default"
MAX_MODEL_LEN=131072
MAX_NUM_SEQS=2
MAX_NUM_BATCHED_TOKENS=8192
GPU_MEMORY_UTILIZATION=0.80
KV_CACHE_DTYPE=auto
MTP_K=2
MTP_DRAFT_VOCAB=""
CHAT_TEMPLATE=""
READY_TIMEOUT_S=1800
MEMWATCH_RELIEF=off
MEMWATCH_FLOOR_GIB=6
EXTRA_DOCKER_ARGS=""
EXTRA_VLLM_ARGS=""
HF_HOME="${HOME:-/root}/.cache/huggingface"
BIND=127.0.0.1
PORT=8000
REQUIRE_IDLE_GPU=0
TP1_CONTAINER_NAME=vllm-qwen38
API_KEY=""
HF_TOKEN=""
if [[ -f "$HERE/.env" ]]; then
  set -a
  # shellcheck disable=SC1091
  source "$HERE/.env"
  set +a
fi
NAME="$TP1_CONTAINER_NAME"

# The recipe watchdog: stops the container when MemFree falls below MEMWATCH_FLOOR_GIB. With
# MEMWATCH_RELIEF=drop_caches it first drops the page cache once with sudo -n; a failing sudo -n is logged once and
# the watchdog then works as with the relief off.
memwatch() {
  local pid relieved=0 free_kb floor_kb=$((MEMWATCH_FLOOR_GIB * 1048576))
  pid="$(docker inspect --format '{{.State.Pid}}' "$NAME" 2>/dev/null)" || return 0
  while kill -0 "$pid" 2>/dev/null; do
    free_kb="$(awk '/^MemFree:/ {print $2}' /proc/meminfo)"
    if ((free_kb < floor_kb)); then
      if [[ "$MEMWATCH_RELIEF" == drop_caches && "$relieved" == 0 ]]; then
        relieved=1
        if sudo -n sh -c 'sync; echo 1 >/proc/sys/vm/drop_caches'; then
          echo "memwatch: MemFree $((free_kb / 1024)) MiB < ${MEMWATCH_FLOOR_GIB} GiB floor: dropped the page cache"
          sleep 1
          continue
        fi
        echo "memwatch: sudo -n failed: relief off"
      fi
      echo "memwatch: MemFree $((free_kb / 1024)) MiB < ${MEMWATCH_FLOOR_GIB} GiB floor: stopping $NAME"
      docker stop "$NAME" >/dev/null
      return 0
    fi
    sleep 1
  done
}

abs_path() { if [[ "$1" == /* ]]; then echo "$1"; else echo "$HERE/$1"; fi; }

if [[ "$REQUIRE_IDLE_GPU" == 1 && -n "$(nvidia-smi --query-compute-apps=pid --format=csv,noheader 2>/dev/null)" ]]; then
  echo "start.sh: REQUIRE_IDLE_GPU=1 and the GPU has compute processes" >&2
  exit 1
fi

state="$(docker inspect --format '{{.State.Status}}' "$NAME" 2>/dev/null || true)"
if [[ "$state" == running ]]; then
  echo "start.sh: container $NAME is already running; run stop.sh first" >&2
  exit 1
elif [[ -n "$state" ]]; then
  docker rm "$NAME" >/dev/null
fi

recipe_mounts="-v $HF_HOME:/root/.cache/huggingface -v $HERE/mtp.py:/opt/vllm/vllm/model_executor/models/qwen3_next_mtp.py:ro"
vllm_files=""
if [[ -n "$CHAT_TEMPLATE" ]]; then
  recipe_mounts+=" -v $(abs_path "$CHAT_TEMPLATE"):/opt/recipe/chat_template.jinja:ro"
  vllm_files+=" --chat-template /opt/recipe/chat_template.jinja"
fi
spec_cfg="{\"method\":\"qwen3_next_mtp\",\"num_speculative_tokens\":$MTP_K}"
if [[ -n "$MTP_DRAFT_VOCAB" ]]; then
  recipe_mounts+=" -v $(abs_path "$MTP_DRAFT_VOCAB"):/opt/recipe/draft_vocab.json:ro"
  spec_cfg="{\"method\":\"qwen3_next_mtp\",\"num_speculative_tokens\":$MTP_K,\"draft_vocab\":\"/opt/recipe/draft_vocab.json\"}"
fi

# A recipe that sets a restart policy (the sim's knob: SIM_STATE/restart-policy, e.g. on-failure).
restart_flag=""
[[ -s "$SIM_STATE/restart-policy" ]] && restart_flag="--restart $(cat "$SIM_STATE/restart-policy") "

# The generated launch script: EXTRA_DOCKER_ARGS and EXTRA_VLLM_ARGS go in without quotes (one line each), which is
# why pulse allows only -e/-v pairs there. The API key stays a variable reference, never written to the file.
LAUNCH="$HERE/.launch.sh"
[[ "$NO_LAUNCH" == 1 ]] && LAUNCH="$HERE/.last_launch.sh"
cat >"$LAUNCH" <<LAUNCH_EOF
#!/usr/bin/env bash
exec docker run -d --name $NAME $restart_flag--gpus all --ipc host --network host --shm-size 16g \\
  -e HF_HOME=/root/.cache/huggingface -e MEMWATCH_RELIEF=$MEMWATCH_RELIEF -e MEMWATCH_FLOOR_GIB=$MEMWATCH_FLOOR_GIB \\
  $recipe_mounts \\
  $(printf "%s " $EXTRA_DOCKER_ARGS) \\
  $IMAGE vllm serve $MODEL --served-model-name $SERVED_MODEL_NAME --max-model-len $MAX_MODEL_LEN \\
  --max-num-seqs $MAX_NUM_SEQS --max-num-batched-tokens $MAX_NUM_BATCHED_TOKENS \\
  --gpu-memory-utilization $GPU_MEMORY_UTILIZATION --kv-cache-dtype $KV_CACHE_DTYPE \\
  --speculative-config '$spec_cfg'$vllm_files \\
  --port $PORT --host $BIND \${API_KEY:+--api-key "\$API_KEY"} $(printf "%s " $EXTRA_VLLM_ARGS)
LAUNCH_EOF
if [[ "$NO_LAUNCH" == 1 ]]; then
  # Like the real mode: a helper container runs and the launch script is left for the user.
  docker run -d --name "$NAME-prep" "$IMAGE" sleep 3600 >/dev/null
  echo "start.sh: --no-launch: started $NAME-prep and wrote $LAUNCH"
  exit 0
fi

echo "start.sh: starting $NAME ($IMAGE, $SERVED_MODEL_NAME) on $BIND:$PORT"
if ! bash "$LAUNCH"; then
  echo "start.sh: docker run failed" >&2
  exit 1
fi

# The watchdog runs from / like a daemon, so it never holds the recipe dir as its working directory.
(cd / && memwatch) </dev/null >>"$HERE/logs/memwatch.log" 2>&1 &
disown

poll_s="$(cat "$SIM_STATE/ready-poll-s" 2>/dev/null || echo 5)"
deadline=$(($(date +%s) + READY_TIMEOUT_S))
while :; do
  if printf 'header = "Authorization: Bearer %s"\n' "$API_KEY" |
    curl -sf -o /dev/null --max-time 5 -K - "http://localhost:$PORT/v1/models"; then
    echo "start.sh: $NAME is ready on port $PORT"
    exit 0
  fi
  if [[ "$(docker inspect --format '{{.State.Running}}' "$NAME" 2>/dev/null)" != true ]]; then
    echo "start.sh: container $NAME exited before it was ready; last log lines:" >&2
    docker logs --tail 20 "$NAME" >&2 2>&1
    exit 1
  fi
  if (($(date +%s) >= deadline)); then
    echo "start.sh: $NAME not ready after ${READY_TIMEOUT_S}s; removing the container" >&2
    docker rm -f "$NAME" >/dev/null
    exit 1
  fi
  sleep "$poll_s"
done
