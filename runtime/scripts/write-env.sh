# write-env: back up the recipe .env, then replace it atomically (temp file in the same dir, fsync, rename).
# Skipped when the current file already has the new identity (sha256 + profile + overlay header) and an intact
# body, which also makes a retry after success write no second backup. The old file's HF_TOKEN/API_KEY lines (any
# form bash's `source` sets for certain, see the prelude's .env parser) go to the end of the new one as KEY="value"
# (KEY='value' when the value needs it), one line per key, counted in `carried`; their values are never printed.
# A failed write leaves the old .env untouched. After a write, backups beyond the newest PULSE_KEEP_BACKUPS (0: keep
# all) are removed, never PULSE_KEEP_BACKUP (the one last known good points to); names sort by their UTC stamp.
# Inputs: PULSE_ENV_PATH, PULSE_NEW_ENV_B64, PULSE_NEW_SHA256, PULSE_NEW_PROFILE, PULSE_NEW_OVERLAY, PULSE_STAMP,
# PULSE_KEEP_BACKUPS, PULSE_KEEP_BACKUP; a rollback also PULSE_RESTORE_FROM: then the new file is that backup's exact
# bytes (its own HF_TOKEN/API_KEY lines included, nothing carried), once a private copy of it is a file as pulse
# writes them, its secret lines pass the carry check, and its public text (prelude pulse_env_public) is the decoded
# text byte for byte (the plan was made from this file, and it did not change since).
# Record: write-env{written,backup,carried,pruned}.
target=$PULSE_ENV_PATH
dir=$(dirname -- "$target")
[[ -d $dir ]] || pulse_fail "$PULSE_EXIT_PRECONDITION" "recipe directory $dir is missing"
hdr() { pulse_env_header "$1" "$target"; }

if [[ -f $target && $(hdr sha256) == "$PULSE_NEW_SHA256" && $(hdr profile) == "$PULSE_NEW_PROFILE" &&
  $(hdr overlay) == "$PULSE_NEW_OVERLAY" && $(pulse_body_sha "$target") == "$PULSE_NEW_SHA256" ]]; then
  # A retry after this deploy's own write (crash-resume) reports the backup that write made, so the result keeps it.
  bak="$dir/.env.pulse-bak-$PULSE_STAMP"
  [[ -e $bak ]] || bak=
  pulse_record write-env written:=false backup="$bak" carried:=0 reason='same identity'
  exit 0
fi

tmp=$(mktemp "$dir/.env.pulse-tmp.XXXXXX") || pulse_fail "$PULSE_EXIT_PRECONDITION" "cannot create a temp file in $dir"
pulse_hold_temp "$tmp" # gone at the next step if this one is killed (prelude pulse_sweep_temps)
bak_tmp=
trap 'rm -f -- "$tmp" ${bak_tmp:+"$bak_tmp"}' EXIT
fail_write() { pulse_fail "$PULSE_EXIT_PRECONDITION" "cannot write $1 (disk full?); the old .env is unchanged"; }

carried=0
if [[ -n ${PULSE_RESTORE_FROM:-} ]]; then
  src=$PULSE_RESTORE_FROM
  [[ -e $src || -L $src ]] || pulse_fail "$PULSE_EXIT_PRECONDITION" "backup $src is gone; the .env is unchanged"
  # One private copy, checked as read-backup checked the file (a regular file pulse wrote, its secret lines ones
  # pulse carries, its public text the plan's): what is checked is what is restored, whatever happens to $src now.
  why=$(pulse_copy_regular "$src" "$tmp") || pulse_fail "$PULSE_EXIT_REFUSED" "backup $src: $why; the .env is unchanged"
  secrets='' # set by pulse_env_secrets_to
  pulse_env_secrets_to secrets "$tmp" || pulse_fail "$PULSE_EXIT_PRECONDITION" "$PULSE_ENV_UNREAD"
  while IFS=$'\t' read -r what a b why; do
    [[ $what != bad ]] || pulse_fail "$PULSE_EXIT_REFUSED" "backup $src:$a: $b: $why; pulse does not restore it (the .env is unchanged)"
  done <<<"$secrets"
  cmp -s <(pulse_env_public "$tmp") <(printf '%s' "$PULSE_NEW_ENV_B64" | base64 -d) ||
    pulse_fail "$PULSE_EXIT_REFUSED" "backup $src is not the file this rollback was planned from (changed since, or the plan was not made from it); the .env is unchanged"
else
  printf '%s' "$PULSE_NEW_ENV_B64" | base64 -d >"$tmp" || fail_write "$tmp"
  [[ -z $(tail -c 1 "$tmp") ]] || printf '\n' >>"$tmp" || fail_write "$tmp"
fi
if [[ -f $target && -z ${PULSE_RESTORE_FROM:-} ]]; then
  # The prelude's .env parser decides what is carried (the rule preflight checked): one normalised line per secret.
  # A line it cannot carry fails here too (the file changed since preflight), before the old .env is replaced.
  secrets='' # set by pulse_env_secrets_to
  pulse_env_secrets_to secrets "$target" || pulse_fail "$PULSE_EXIT_PRECONDITION" "$PULSE_ENV_UNREAD"
  while IFS=$'\t' read -r what a b why; do
    case $what in
      bad) pulse_fail "$PULSE_EXIT_PRECONDITION" "$target:$a: $b: $why; pulse cannot carry it to the new .env (the old .env is unchanged)" ;;
      set) printf '%s\n' "$b" >>"$tmp" || fail_write "$tmp"; carried=$((carried + 1)) ;;
    esac
  done <<<"$secrets"
fi
if ! chmod 600 "$tmp" || ! sync -- "$tmp"; then fail_write "$tmp"; fi

backup=
if [[ -f $target ]]; then
  backup="$dir/.env.pulse-bak-$PULSE_STAMP"
  # A backup with this stamp that is NOT the old file byte for byte belongs to another deploy (a reused or forged
  # render time): never take it for ours, or the old .env would be replaced with no copy. Use the next free name.
  n=0
  while [[ -e $backup ]] && ! cmp -s -- "$backup" "$target"; do n=$((n + 1)); backup="$dir/.env.pulse-bak-$PULSE_STAMP-$n"; done
  # A backup with this deploy's stamp that equals the old file is ours (a crash came before the rename): keep it.
  if [[ ! -e $backup ]]; then
    bak_tmp=$(mktemp "$dir/.env.pulse-bak-tmp.XXXXXX") || fail_write "$dir"
    pulse_hold_temp "$bak_tmp"
    if ! cp -- "$target" "$bak_tmp" || ! chmod 600 "$bak_tmp" || ! sync -- "$bak_tmp"; then fail_write "$backup"; fi
    mv -f -- "$bak_tmp" "$backup" || fail_write "$backup"
    bak_tmp=
  fi
fi
mv -f -- "$tmp" "$target" || fail_write "$target"
sync -- "$dir" 2>/dev/null || true
pruned=0
keep=${PULSE_KEEP_BACKUPS:-0}
if [[ $keep =~ ^[1-9][0-9]*$ ]]; then
  n=0
  # Newest first: the stamp is a UTC time, and a -<n> suffix (same stamp, other content) is newer than its base.
  while IFS= read -r f; do
    n=$((n + 1))
    ((n > keep)) || continue
    [[ $f == "${PULSE_KEEP_BACKUP:-}" || $f == "$backup" ]] && continue
    rm -f -- "$f" && pruned=$((pruned + 1))
  done < <(find "$dir" -maxdepth 1 -type f -name '.env.pulse-bak-[0-9]*' -print |
    awk '{ s = $0; sub(/.*\.env\.pulse-bak-/, "", s); k = s; n = 0; if (match(s, /-[0-9]+$/)) { n = substr(s, RSTART + 1) + 0; k = substr(s, 1, RSTART - 1) } printf "%s\t%012d\t%s\n", k, n, $0 }' |
    sort -r | cut -f3-)
fi
pulse_record write-env written:=true backup="$backup" carried:="$carried" pruned:="$pruned"
