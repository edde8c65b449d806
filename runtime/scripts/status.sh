# status: read-only report of one node. It changes nothing: no file is written (a temp file for the HTTP body
# lives under mktemp and is removed), no container is started or stopped.
# Inputs:
#   PULSE_RECIPES      one recipe per line: name<TAB>dir<TAB>container
#   PULSE_PORT         server port (node env PORT)
#   PULSE_PROBE_HOST   address to reach the server from the node itself (BIND, or loopback for a wildcard BIND)
#   PULSE_HTTP         1: GET /v1/models on the primary recipe's server; 0: no HTTP request at all
#   PULSE_HEALTH_ROUTE 1 (with PULSE_HTTP=1): GET /health as well (the watchdog: 503 means the engine is dead)
#   PULSE_KV_TAIL_LINES how many of the container log's last lines are searched for the KV cache line (default 2000)
# Every command that could read stdin gets </dev/null: bash -s reads the rest of this script from stdin.
# Records:
#   container  recipe name exists running status startedAt image      (one per recipe, status `absent` when docker
#                                                                        says there is none, `unknown` when the daemon
#                                                                        does not answer; of an existing one also
#              exitCode restartCount finishedAt oomKilled exitMeaning    the last exit, in words (pulse_exit_words),
#              logConfig error                                           HostConfig.LogConfig and State.Error as JSON)
#   env        recipe path exists text_b64                              (the .env with secret lines replaced)
#   primary    recipe                                                    (the recipe status reports on)
#   kv-cache   recipe line concurrency                                   (the last KV cache size and concurrency lines)
#   health     httpStatus body_b64 detail [healthRoute] | skipped        (only when PULSE_HTTP=1; healthRoute:
#                                                                        GET /health's code, 0: no answer)
#   memory     availableKiB totalKiB watermarkScaleFactor
#   gpu-proc   line                                                      (nvidia-smi compute apps, one each)
#   gpu        ok detail                                                 (whether nvidia-smi answered)
#   docker     ok detail [daemon]                                        (docker is missing, or daemon false: the
#                                                                        Docker daemon does not answer, in docker's words)

_status_tmp=$(mktemp -d)
trap 'rm -rf "$_status_tmp"' EXIT

# The .env as it may leave the node: the prelude's pulse_env_public (every line that names a secret, any form, and the
# rest of a value it continues, replaced by a marker: @@PULSE_SECRET_LINE@@ for a secret line pulse carries, so the
# controller can tell where those are and hash the rest, runtime/config/env-header.ts).
status_env_text() {
  pulse_env_public "$1" | head -c 262144 | base64 | tr -d '\n'
}

# One inspect call per container (each docker call costs time on a busy node); State.Error and the log config go as
# JSON, so no tab or newline in them can shift a field. `docker container inspect` never matches an image or volume.
status_container() {
  local name=$1 recipe=$2 info state running started image code restarts finished oom logcfg err meaning=
  local fmt='{{.State.Status}}{{"\t"}}{{.State.Running}}{{"\t"}}{{.State.StartedAt}}{{"\t"}}{{.Config.Image}}{{"\t"}}{{.State.ExitCode}}'
  fmt+='{{"\t"}}{{.RestartCount}}{{"\t"}}{{.State.FinishedAt}}{{"\t"}}{{.State.OOMKilled}}{{"\t"}}{{json .HostConfig.LogConfig}}{{"\t"}}{{json .State.Error}}'
  if ! pulse_docker_to info container inspect --format "$fmt" "$name"; then
    # Absent only when the daemon answered; else nobody knows (status `unknown`, and one `docker` record says why).
    if ! pulse_docker_answers; then
      pulse_record container recipe="$recipe" name="$name" exists:=false running:=false status=unknown startedAt:=null image:=null
      return 3
    fi
    pulse_record container recipe="$recipe" name="$name" exists:=false running:=false status=absent startedAt:=null image:=null
    return 1
  fi
  IFS=$'\t' read -r state running started image code restarts finished oom logcfg err <<<"$info"
  [[ $running == true ]] || running=false
  [[ $code =~ ^[0-9]+$ ]] || code=null
  [[ $restarts =~ ^[0-9]+$ ]] || restarts=null
  # The last exit, when docker still has it: a container that does not run, or waits to restart (a new run resets
  # ExitCode to 0, moby State.setRunning).
  if [[ $code != null && ($running != true || $state == restarting) && $started != 0001-* ]]; then meaning=$(pulse_exit_words "$code" "$oom"); fi
  pulse_record container recipe="$recipe" name="$name" exists:=true running:="$running" status="$state" startedAt="$started" image="$image" \
    exitCode:="$code" restartCount:="$restarts" finishedAt="$finished" oomKilled:="${oom:-false}" exitMeaning="$meaning" logConfig="$logcfg" error="$err"
  [[ $running == true ]] && return 0
  return 2
}

# Each entry: name<TAB>dir<TAB>container<TAB>docker state (0 running, 2 exists, 1 absent, 3 unknown: the daemon does
# not answer), so the primary recipe's state needs no second `docker inspect`.
primary='' primary_dir='' primary_container='' primary_rc='' first='' existing=''
have_docker=true
command -v docker >/dev/null 2>&1 || have_docker=false
while IFS=$'\t' read -r r_name r_dir r_container; do
  [[ -n $r_name ]] || continue
  rc=1
  if $have_docker; then status_container "$r_container" "$r_name" && rc=0 || rc=$?; fi
  entry="$r_name"$'\t'"$r_dir"$'\t'"$r_container"$'\t'"$rc"
  [[ -n $first ]] || first=$entry
  if [[ $rc == 0 && -z $primary ]]; then primary=$entry; fi
  if [[ $rc == 2 && -z $existing ]]; then existing=$entry; fi
  envf="$r_dir/.env"
  if [[ -r $envf ]]; then
    pulse_record env recipe="$r_name" path="$envf" exists:=true text_b64="$(status_env_text "$envf")"
  else
    pulse_record env recipe="$r_name" path="$envf" exists:=false
  fi
done <<<"${PULSE_RECIPES:-}"
$have_docker || pulse_record docker ok:=false detail="docker not found on PATH"
[[ -z $PULSE_DOCKER_DOWN ]] || pulse_record docker ok:=false daemon:=false detail="$PULSE_DOCKER_DOWN"

# The primary recipe: the one whose container runs, else one whose container exists, else the first.
[[ -n $primary ]] || primary=${existing:-$first}
IFS=$'\t' read -r primary primary_dir primary_container primary_rc <<<"$primary"
pulse_record primary recipe="$primary"

if [[ $primary_rc == 0 || $primary_rc == 2 ]]; then
  # Only the log's last PULSE_KV_TAIL_LINES lines (default 2000) are read: docker reads a --tail from the end of the
  # file, so the cost does not grow with the log (a json-file log without max-size never rotates and grows for as
  # long as the container lives: reading it whole took 7-8 s per status at 120 MB, and every watchdog check pays it).
  # vLLM prints the line once at start-up, so on a server that has logged more since, it is not in the tail and the
  # controller shows the value `up` saved (from the log while it was young). A driver that cannot be read (none)
  # makes docker logs fail: no line then. One line in current vLLM, a size and a concurrency line in older releases
  # (the controller joins them); one awk pass keeps the last of each, cut to 1000 bytes.
  kv_tail=${PULSE_KV_TAIL_LINES:-2000}
  [[ $kv_tail =~ ^[0-9]+$ ]] || kv_tail=2000
  # shellcheck disable=SC2016 # an awk program: its $ are awk's, not bash's
  kvs=$(pulse_docker logs --tail "$kv_tail" "$primary_container" 2>&1 | "$_PULSE_AWK" '
    /KV cache size: [0-9,]+ tokens/ { kv = substr($0, 1, 1000) }
    /Maximum concurrency for [0-9,]+ tokens per request/ { conc = substr($0, 1, 1000) }
    END { print kv; print conc }') || true
  { IFS= read -r kv || kv=; IFS= read -r conc || conc=; } <<<"$kvs"
  pulse_record kv-cache recipe="$primary" line="$kv" concurrency="$conc"
fi

primary_running=false
[[ $primary_rc == 0 ]] && primary_running=true
# A daemon that does not answer says nothing about the server: with live-restore its containers go on serving while
# dockerd is down, so the HTTP check still runs.
[[ $primary_rc != 3 ]] || primary_running=true

if [[ ${PULSE_HTTP:-0} == 1 ]] && ! $primary_running; then
  pulse_record health skipped="not checked: no container runs"
elif [[ ${PULSE_HTTP:-0} == 1 ]]; then
  pulse_api_key "$primary_dir/.env"
  code=$(pulse_curl_auth -sS -m 10 -o "$_status_tmp/models" -w '%{http_code}' \
    "http://${PULSE_PROBE_HOST}:${PULSE_PORT}/v1/models" 2>"$_status_tmp/curl.err") || true
  route=()
  if [[ ${PULSE_HEALTH_ROUTE:-0} == 1 ]]; then
    # vLLM's /health wants no key; 200 with no body while the engine lives, 503 once it is dead.
    hcode=$(curl -sS -m 10 -o /dev/null -w '%{http_code}' "http://${PULSE_PROBE_HOST}:${PULSE_PORT}/health" </dev/null 2>/dev/null) || true
    [[ $hcode =~ ^[0-9]+$ ]] && hcode=$((10#$hcode)) || hcode=0
    route=(healthRoute:="$hcode")
  fi
  unset PULSE_API_KEY_VALUE
  [[ $code =~ ^[0-9]+$ ]] && code=$((10#$code)) || code=0 # curl says 000 when nothing answered
  body=$(head -c 65536 "$_status_tmp/models" 2>/dev/null | base64 | tr -d '\n' || true)
  pulse_record health httpStatus:="${code:-0}" body_b64="$body" detail="$(head -c 300 "$_status_tmp/curl.err")" ${route[@]+"${route[@]}"}
fi

# shellcheck disable=SC2016 # an awk program: its $ are awk's, not bash's
avail=$("$_PULSE_AWK" '$1 == "MemAvailable:" { print $2 }' /proc/meminfo 2>/dev/null || true)
# shellcheck disable=SC2016 # an awk program: its $ are awk's, not bash's
total=$("$_PULSE_AWK" '$1 == "MemTotal:" { print $2 }' /proc/meminfo 2>/dev/null || true)
wsf=$(cat /proc/sys/vm/watermark_scale_factor 2>/dev/null || true)
pulse_record memory availableKiB:="${avail:-null}" totalKiB:="${total:-null}" watermarkScaleFactor:="${wsf:-null}"

# nvidia-smi is information only: on spark2 it did not always list the vLLM container.
if command -v nvidia-smi >/dev/null 2>&1; then
  if apps=$(timeout 20 nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader,nounits </dev/null 2>"$_status_tmp/smi.err"); then
    while IFS= read -r line; do
      [[ -n $line ]] && pulse_record gpu-proc line="$line"
    done <<<"$apps"
    pulse_record gpu ok:=true detail=""
  else
    pulse_record gpu ok:=false detail="nvidia-smi failed: $(head -c 200 "$_status_tmp/smi.err")"
  fi
else
  pulse_record gpu ok:=false detail="nvidia-smi not found"
fi
