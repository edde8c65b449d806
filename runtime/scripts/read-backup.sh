# read-backup: a rollback's source, read-only. The backup's text without its HF_TOKEN/API_KEY lines (those never
# leave the node: the write step copies the file itself), and the same of the live .env for the key difference.
# Inputs: PULSE_BACKUP_PATH, PULSE_ENV_PATH.
# Records: backup{exists,b64,secretLines}, current{exists,b64}.
secret_re='^[[:space:]]*(export[[:space:]]+)?(HF_TOKEN|API_KEY)\+?='
f=$PULSE_BACKUP_PATH
if [[ -f $f && -r $f ]]; then
  n=$(grep -cE "$secret_re" -- "$f" || true)
  pulse_record backup exists:=true b64="$(pulse_env_public "$f" | base64 | tr -d '\n')" secretLines:="${n:-0}"
else
  pulse_record backup exists:=false b64= secretLines:=0
fi
if [[ -f $PULSE_ENV_PATH && -r $PULSE_ENV_PATH ]]; then
  pulse_record current exists:=true b64="$(pulse_env_public "$PULSE_ENV_PATH" | base64 | tr -d '\n')"
else
  pulse_record current exists:=false b64=
fi
