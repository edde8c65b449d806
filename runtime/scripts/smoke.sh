# smoke: one short chat completion through the node's own server. The key comes from the node .env and reaches
# curl on stdin (pulse_curl_auth), never on a command line; the request body goes in a temp file.
# Inputs: PULSE_RECIPES (name<TAB>dir<TAB>container per line), PULSE_PROBE_HOST, PULSE_PORT, PULSE_SMOKE_PROMPT,
#         PULSE_SMOKE_MAX_TOKENS
# Records: smoke-recipe name, smoke-model name (when the .env names one), smoke httpStatus seconds body_b64 detail
_smoke_tmp=$(mktemp -d)
trap 'rm -rf "$_smoke_tmp"' EXIT
# The recipe whose container runs (its .env holds the key and the served name), else the first recipe.
recipe='' PULSE_ENV_PATH=''
while IFS=$'\t' read -r r_name r_dir r_container; do
  [[ -n $r_name ]] || continue
  if [[ -z $recipe ]]; then recipe=$r_name PULSE_ENV_PATH="$r_dir/.env"; fi
  # A daemon that does not answer picks no recipe here (the first one goes), and costs one bound, not one per recipe.
  running=
  pulse_docker_to running container inspect --format '{{.State.Running}}' "$r_container" || true
  if [[ $running == true ]]; then
    recipe=$r_name PULSE_ENV_PATH="$r_dir/.env"
    break
  fi
done <<<"${PULSE_RECIPES:-}"
[[ -n $recipe ]] || pulse_fail "$PULSE_EXIT_PRECONDITION" "the node has no recipe"
pulse_record smoke-recipe name="$recipe"
[[ -r $PULSE_ENV_PATH ]] || pulse_fail "$PULSE_EXIT_PRECONDITION" "cannot read $PULSE_ENV_PATH"
model=$(pulse_env_get SERVED_MODEL_NAME "$PULSE_ENV_PATH" 2>/dev/null) || model=
[[ -n $model ]] || model=$(pulse_env_get MODEL "$PULSE_ENV_PATH" 2>/dev/null) || model=
# vLLM accepts a request without "model" (its first served name answers): a .env that names no model (the
# recipe's defaults apply) is still smoke-tested, and the answer says which model it was.
model_field=
if [[ -n $model ]]; then
  pulse_record smoke-model name="$model"
  model_field="\"model\":$(pulse_json_str "$model"),"
fi
printf '{%s"messages":[{"role":"user","content":%s}],"max_tokens":%s,"temperature":0}' \
  "$model_field" "$(pulse_json_str "$PULSE_SMOKE_PROMPT")" "${PULSE_SMOKE_MAX_TOKENS:-32}" >"$_smoke_tmp/req"
pulse_api_key "$PULSE_ENV_PATH"
out=$(pulse_curl_auth -sS -m 120 -o "$_smoke_tmp/body" -w '%{http_code} %{time_total}' \
  -H 'Content-Type: application/json' --data-binary @"$_smoke_tmp/req" \
  "http://${PULSE_PROBE_HOST}:${PULSE_PORT}/v1/chat/completions" 2>"$_smoke_tmp/err") || true
unset PULSE_API_KEY_VALUE
read -r code secs <<<"${out:-0 0}"
[[ $code =~ ^[0-9]+$ ]] && code=$((10#$code)) || code=0
[[ $secs =~ ^[0-9]+(\.[0-9]+)?$ ]] || secs=0
body=$(head -c 65536 "$_smoke_tmp/body" 2>/dev/null | base64 | tr -d '\n' || true)
pulse_record smoke httpStatus:="$code" seconds:="$secs" body_b64="$body" detail="$(head -c 300 "$_smoke_tmp/err")"
