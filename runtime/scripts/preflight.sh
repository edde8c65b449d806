# preflight (read-only): checks the node before any change and reports what runs now. It writes nothing.
# Inputs: PULSE_RECIPE_DIR/START/STOP, PULSE_CONTAINER, PULSE_ENV_PATH, PULSE_PORT, PULSE_IMAGE, PULSE_HF_HOME,
# PULSE_MODEL, PULSE_CHAT_TEMPLATE, PULSE_MTP_DRAFT_VOCAB, PULSE_MOUNTS (src<TAB>dst<TAB>mode lines), PULSE_MKDIRS.
# Records: check{name,ok,detail}, env-file, env-key{key,sha256}, container, mount-ctime, other-vllm, connections.
# Exit 11 when any check failed (the findings are still all reported); 15 when the Docker daemon does not answer.
failed=0
check() {
  pulse_record check name="$1" ok:="$2" detail="$3"
  [[ $2 == true ]] || failed=1
}
file_check() { # name path what
  if [[ -f $2 ]]; then check "$1" true "$2"; else check "$1" false "$3 $2 is missing"; fi
}

if [[ -d $PULSE_RECIPE_DIR ]]; then check recipe-dir true "$PULSE_RECIPE_DIR"; else check recipe-dir false "recipe directory $PULSE_RECIPE_DIR is missing"; fi
file_check recipe-start "$(pulse_abs "$PULSE_RECIPE_START")" 'start script'
file_check recipe-stop "$(pulse_abs "$PULSE_RECIPE_STOP")" 'stop script'

# readiness and verify probe the server with curl on the node.
if command -v curl >/dev/null 2>&1; then check curl true "$(command -v curl)"; else check curl false 'curl is not on PATH (readiness needs it)'; fi
have_docker=false
if command -v docker >/dev/null 2>&1; then have_docker=true; check docker true "$(command -v docker)"; else check docker false 'docker is not on PATH'; fi
# A failed docker call is "not on the node" only when the daemon answered (prelude.sh pulse_docker_answers); a daemon
# that does not answer fails preflight with its own exit (15), and nothing below asks docker again.
docker_down=false
if [[ $have_docker == true && -n $PULSE_IMAGE ]]; then
  if pulse_docker_to image_id image inspect --format '{{.Id}}' "$PULSE_IMAGE"; then check image true "$PULSE_IMAGE"
  elif pulse_docker_answers; then check image false "image $PULSE_IMAGE is not on the node"
  else docker_down=true; check docker-daemon false "$PULSE_DOCKER_DOWN"; fi
fi

# A bind-mounted FILE keeps its old inode in a running container, so its ctime decides whether the server must
# restart; a mounted directory shows changes live (and vLLM writes into its caches), so it does not count.
file_ctime() {
  local ct
  [[ -f $1 ]] || return 0
  ct=$(find -L "$1" -maxdepth 0 -printf '%C@' 2>/dev/null || true)
  [[ -z $ct ]] || pulse_record mount-ctime path="$1" ctime:="$ct"
}
# A pulse-mkdir directory (or a path under it) does not exist yet before step 2 creates it.
will_mkdir() {
  local d
  while IFS= read -r d; do
    [[ -n $d && ($1 == "$d" || $1 == "$d"/*) ]] && return 0
  done <<<"${PULSE_MKDIRS:-}"
  return 1
}
# Every mount source must exist: pulse never copies files between nodes.
while IFS=$'\t' read -r src dst _mode; do
  [[ -n $src ]] || continue
  if [[ -e $src ]]; then
    check "mount:$dst" true "$src"
    file_ctime "$src"
  elif will_mkdir "$src"; then
    check "mount:$dst" true "$src (created by the mkdir step)"
  else
    check "mount:$dst" false "mount source $src (for $dst) is missing"
  fi
done <<<"${PULSE_MOUNTS:-}"

if [[ -n $PULSE_MODEL && -n $PULSE_HF_HOME ]]; then
  snap="$PULSE_HF_HOME/hub/models--${PULSE_MODEL//\//--}/snapshots"
  found=$(compgen -G "$snap/*/config.json" | head -n 1 || true)
  if [[ -n $found ]]; then check hf-cache true "$found"; else check hf-cache false "no $snap/*/config.json for $PULSE_MODEL"; fi
fi
# start.sh bind-mounts CHAT_TEMPLATE and MTP_DRAFT_VOCAB itself: check them, and count their ctime too.
for pair in "chat-template CHAT_TEMPLATE ${PULSE_CHAT_TEMPLATE:-}" "mtp-draft-vocab MTP_DRAFT_VOCAB ${PULSE_MTP_DRAFT_VOCAB:-}"; do
  read -r name key rel <<<"$pair"
  [[ -n $rel ]] || continue
  file_check "$name" "$(pulse_abs "$rel")" "$key"
  file_ctime "$(pulse_abs "$rel")"
done

# The current .env, read without executing it. Values are reported only as sha256 of the normalised value;
# HF_TOKEN and API_KEY are skipped entirely. Their lines must be ones write-env can carry byte for byte (the same
# parser decides both), or up stops here, before anything stops: a lost API_KEY would serve without auth.
if [[ -f $PULSE_ENV_PATH ]]; then
  secret_bad=() secret_keys=()
  secrets=
  pulse_env_secrets_to secrets "$PULSE_ENV_PATH" || secret_bad+=("$PULSE_ENV_UNREAD")
  while IFS=$'\t' read -r what a b why; do
    if [[ $what == bad ]]; then secret_bad+=("$PULSE_ENV_PATH:$a: $b: $why"); elif [[ $what == set ]]; then secret_keys+=("$a"); fi
  done <<<"$secrets"
  if [[ -n $PULSE_ENV_UNREAD ]]; then
    check env-secrets false "$PULSE_ENV_UNREAD"
  elif ((${#secret_bad[@]} > 0)); then
    check env-secrets false "pulse cannot carry these lines to the new .env safely (write them as KEY='value'): $(IFS=';'; printf '%s' "${secret_bad[*]}")"
  else
    check env-secrets true "${#secret_keys[@]} secret line(s) to carry: ${secret_keys[*]:-none}"
  fi
  hdr() { pulse_env_header "$1" "$PULSE_ENV_PATH"; }
  body=$(pulse_body_sha "$PULSE_ENV_PATH")
  pulse_record env-file exists:=true ctime:="$(pulse_ctime "$PULSE_ENV_PATH")" sha256="$(hdr sha256)" \
    profile="$(hdr profile)" overlay="$(hdr overlay)" bodySha256="$body"
  while IFS= read -r key; do
    case $key in HF_TOKEN | API_KEY | '') continue ;; esac
    v=$(pulse_env_get "$key" "$PULSE_ENV_PATH" || true)
    pulse_record env-key key="$key" sha256="$(pulse_env_norm "$v" | sha256sum | cut -d' ' -f1)"
  done < <(pulse_env_keys "$PULSE_ENV_PATH" | sort -u)
else
  pulse_record env-file exists:=false
fi

if [[ $have_docker == true && $docker_down == false ]]; then
  # One inspect call (each docker call costs time on a busy node). The separators are real tabs: docker inspect,
  # unlike docker ps, does not turn a written \t into one.
  fmt=$'{{.State.Running}}\t{{.State.Status}}\t{{.Config.Image}}\t{{.State.StartedAt}}'
  info='' # set by pulse_docker_to
  if pulse_docker_to info container inspect --format "$fmt" "$PULSE_CONTAINER"; then
    IFS=$'\t' read -r running status image started <<<"$(head -n 1 <<<"$info")"
    pulse_record container name="$PULSE_CONTAINER" running:="$running" status="$status" image="$image" startedAt="$started"
  elif ! pulse_docker_answers; then
    docker_down=true
    check docker-daemon false "$PULSE_DOCKER_DOWN"
  fi
fi
if [[ $have_docker == true && $docker_down == false ]]; then
  # Another vLLM server on this GPU (the recipe's own container is the one up replaces).
  # A list that failed is no list: "no other vLLM" only when docker answered.
  others=() listed=
  if ! pulse_docker_to listed ps --format '{{.Names}}	{{.Image}}' && ! pulse_docker_answers; then
    docker_down=true
    check docker-daemon false "$PULSE_DOCKER_DOWN"
  else
    while IFS=$'\t' read -r name image; do
      [[ -n $name && $name != "$PULSE_CONTAINER" ]] || continue
      if [[ ${image,,} == *vllm* || ${name,,} == *vllm* ]]; then others+=("$name"); pulse_record other-vllm name="$name" image="$image"; fi
    done <<<"$listed"
    if ((${#others[@]} == 0)); then check no-other-vllm true 'no other vLLM container runs'; else check no-other-vllm false "another vLLM container runs: ${others[*]}"; fi
  fi
fi

# Open client connections on the server port (prelude.sh pulse_connections).
conns=$(pulse_connections "$PULSE_PORT")
pulse_record connections count:="${conns:-0}"

[[ $docker_down == false ]] || pulse_fail_docker_down 'preflight: nothing on the node was changed'
((failed == 0)) || exit "$PULSE_EXIT_PRECONDITION"
