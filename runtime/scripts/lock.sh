# lock: the node's deploy lock of one recipe dir, shared by every controller that deploys this node (the workflow ID
# only locks inside one Temporal server). One file per recipe dir, OUTSIDE the recipe (pulse writes only .env, a
# backup and logs/ there): $HOME/.local/state/pulse/locks/<sha256(recipe dir) 24 hex>.lock, key=value lines:
#   deploy  the holder's deploy ID (workflowId/runId)     host   the holder's controller (worker) host
#   action  up | down                                       recipe the recipe dir (for people reading the file)
#   since   node epoch s the holder took it                 until  node epoch s its lease ends (renewals move it)
#   state   held | released
# Every decision reads the NODE's clock (`date +%s`), so no controller's clock skew matters. A lock is live while
# state=held and now < until; a stale lock (lease ran out, no renewal) may be taken by anyone. A released or taken-
# over file keeps the last holder's deploy ID, so a deploy that lost its lock can tell, even after the new holder
# released it. Changes happen under flock on <key>.mutex and are written to a temp file and renamed (atomic).
# Inputs: PULSE_LOCK_OP (acquire|renew|release|show), PULSE_RECIPE_DIR, PULSE_LOCK_DEPLOY, PULSE_LOCK_HOST,
#   PULSE_LOCK_ACTION, PULSE_LOCK_LEASE_S. Record: lock{op,ok,state,deploy,host,action,since,until,now,...}.
# Exit 10 (refused): acquire finds another deploy's live lock, or renew finds the lock is no longer this deploy's.
lock_dir="$HOME/.local/state/pulse/locks"
lock_file="$lock_dir/$(pulse_lock_key "$PULSE_RECIPE_DIR").lock"
op=${PULSE_LOCK_OP:-show}
me=${PULSE_LOCK_DEPLOY:-}
[[ $op == show || $me =~ ^[A-Za-z0-9._:/@-]+$ ]] || pulse_fail "$PULSE_EXIT_PRECONDITION" 'invalid deploy id'

l_deploy= l_host= l_action= l_recipe= l_since=0 l_until=0 l_state=
lock_read() {
  l_deploy= l_host= l_action= l_recipe= l_since=0 l_until=0 l_state=
  [[ -f $lock_file ]] || return 0
  local k v
  while IFS='=' read -r k v; do
    case $k in
      deploy) l_deploy=$v ;; host) l_host=$v ;; action) l_action=$v ;; recipe) l_recipe=$v ;; state) l_state=$v ;;
      since) [[ $v =~ ^[0-9]+$ ]] && l_since=$v ;; until) [[ $v =~ ^[0-9]+$ ]] && l_until=$v ;;
    esac
  done <"$lock_file"
}

lock_iso() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ; }

# The one line that names a holder: deploy id, controller host, since, lease until.
lock_holder() {
  printf 'deploy %s from controller %s (%s) since %s, lease until %s' "${l_deploy:-?}" "${l_host:-?}" "${l_action:-?}" \
    "$(lock_iso "$l_since")" "$(lock_iso "$l_until")"
}

lock_record() {
  local live=false
  [[ $l_state == held && $now -lt $l_until ]] && live=true
  pulse_record lock op="$op" ok:="$1" present:="$([[ -n $l_state ]] && echo true || echo false)" state="${l_state:-none}" \
    live:="$live" deploy="$l_deploy" host="$l_host" action="$l_action" since:="$l_since" until:="$l_until" now:="$now" \
    file="$lock_file" "${@:2}"
}

lock_write() {
  local tmp
  tmp=$(mktemp "$lock_dir/.lock-tmp.XXXXXX") || pulse_fail "$PULSE_EXIT_TEMPORARY" "cannot write in $lock_dir"
  printf 'deploy=%s\nhost=%s\naction=%s\nrecipe=%s\nsince=%s\nuntil=%s\nstate=%s\n' \
    "$1" "$2" "$3" "$PULSE_RECIPE_DIR" "$4" "$5" "$6" >"$tmp" || { rm -f -- "$tmp"; pulse_fail "$PULSE_EXIT_TEMPORARY" "cannot write $tmp"; }
  mv -f -- "$tmp" "$lock_file" || { rm -f -- "$tmp"; pulse_fail "$PULSE_EXIT_TEMPORARY" "cannot replace $lock_file"; }
  l_deploy=$1 l_host=$2 l_action=$3 l_since=$4 l_until=$5 l_state=$6
}

if [[ $op == show ]]; then
  now=$(date +%s)
  lock_read
  lock_record true
  exit 0
fi

[[ ${PULSE_LOCK_LEASE_S:-} =~ ^[1-9][0-9]*$ ]] || pulse_fail "$PULSE_EXIT_PRECONDITION" 'invalid lock lease'
host=${PULSE_LOCK_HOST:-unknown}
[[ $host =~ ^[A-Za-z0-9._-]+$ ]] || host=unknown
command -v flock >/dev/null 2>&1 || pulse_fail "$PULSE_EXIT_PRECONDITION" 'flock (util-linux) is missing on the node: the deploy lock needs it'
mkdir -p -- "$lock_dir" || pulse_fail "$PULSE_EXIT_PRECONDITION" "cannot create $lock_dir"
exec 9>>"$lock_dir/$(basename -- "$lock_file" .lock).mutex"
flock -w 20 9 || pulse_fail "$PULSE_EXIT_TEMPORARY" "the lock file $lock_file is busy (flock)"
now=$(date +%s)
lock_read
until_new=$((now + PULSE_LOCK_LEASE_S))

case $op in
  acquire)
    if [[ $l_state == held && $l_deploy != "$me" && $now -lt $l_until ]]; then
      lock_record false
      pulse_fail "$PULSE_EXIT_REFUSED" "locked by $(lock_holder); nothing was changed"
    fi
    mine=false stale=
    [[ $l_state == held && $l_deploy == "$me" ]] && mine=true
    [[ $l_state == held && $l_deploy != "$me" ]] && stale=$l_deploy
    since=$now
    $mine && since=$l_since
    lock_write "$me" "$host" "${PULSE_LOCK_ACTION:-up}" "$since" "$until_new" held
    lock_record true resumed:="$mine" tookStaleFrom="$stale"
    ;;
  renew)
    if [[ $l_state != held || $l_deploy != "$me" ]]; then
      lock_record false lost:=true
      if [[ -z $l_state ]]; then pulse_fail "$PULSE_EXIT_REFUSED" "this deploy's lock is gone ($lock_file was removed); nothing more is changed"; fi
      if [[ $l_state == released ]]; then pulse_fail "$PULSE_EXIT_REFUSED" "this deploy lost its lock (its lease ran out; $(lock_holder) took it and released it); nothing more is changed"; fi
      pulse_fail "$PULSE_EXIT_REFUSED" "this deploy lost its lock (its lease ran out); now held by $(lock_holder); nothing more is changed"
    fi
    # Still this deploy's, even when the lease ran out meanwhile: nobody else took it, so nothing else changed.
    lock_write "$me" "$host" "$l_action" "$l_since" "$until_new" held
    lock_record true
    ;;
  release)
    if [[ $l_state == held && $l_deploy == "$me" ]]; then
      lock_write "$me" "$l_host" "$l_action" "$l_since" "$now" released
      lock_record true released:=true
    else
      lock_record true released:=false
    fi
    ;;
  *) pulse_fail "$PULSE_EXIT_PRECONDITION" "unknown lock op $op" ;;
esac
