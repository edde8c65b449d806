# read-backup: a rollback's source, read-only. The backup's public text (prelude pulse_env_public: every line that
# names a secret replaced by a marker; the secret lines never leave the node, the write step copies the file itself),
# and the same of the live .env for the key difference. The backup must be a file as pulse writes them (a regular
# file, no symbolic link, owned by the ssh user, not writable by group or others: pulse_copy_regular), and its
# secret lines must pass preflight's secret check (pulse_env_secrets), or the rollback is refused, --force or not,
# before anything stops. Everything is read from one private copy, so what is checked is what is reported.
# Inputs: PULSE_BACKUP_PATH, PULSE_ENV_PATH.
# Records: backup{exists,refused,b64,secretLines}, problem{line,key,why} per secret line pulse cannot carry (never
# its text), current{exists,b64}.
# The copy holds the backup's secret lines: a private file with no name on disk (prelude pulse_private_file), so no
# end of the step, a SIGKILL of its process group included, leaves it on the node.
_rb_tmp='' # set by pulse_private_file
pulse_private_file _rb_tmp
f=$PULSE_BACKUP_PATH
if [[ ! -e $f && ! -L $f ]]; then
  pulse_record backup exists:=false refused= b64= secretLines:=0
elif ! why=$(pulse_copy_regular "$f" "$_rb_tmp"); then
  pulse_record backup exists:=true refused="$why" b64= secretLines:=0
else
  secrets='' # set by pulse_env_secrets_to
  pulse_env_secrets_to secrets "$_rb_tmp" || pulse_fail "$PULSE_EXIT_PRECONDITION" "$PULSE_ENV_UNREAD"
  while IFS=$'\t' read -r what a b why; do
    [[ $what == bad ]] && pulse_record problem line:="$a" key="$b" why="$why"
  done <<<"$secrets"
  public=$(pulse_env_public "$_rb_tmp" | base64 | tr -d '\n')
  n=$(pulse_env_public "$_rb_tmp" | grep -c '^@@PULSE_SECRET_LINE@@$' || true)
  pulse_record backup exists:=true refused= b64="$public" secretLines:="${n:-0}"
fi
if [[ -f $PULSE_ENV_PATH && -r $PULSE_ENV_PATH ]]; then
  pulse_record current exists:=true b64="$(pulse_env_public "$PULSE_ENV_PATH" | base64 | tr -d '\n')"
else
  pulse_record current exists:=false b64=
fi
