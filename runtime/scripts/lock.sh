# lock: the node's deploy lock of one recipe dir, shared by every controller that deploys this node (the workflow ID
# only locks inside one Temporal server). One file per recipe dir, OUTSIDE the recipe (pulse writes only .env, a
# backup and logs/ there): $HOME/.local/state/pulse/locks/<sha256(recipe dir) 24 hex>.lock, key=value lines:
#   deploy  the holder's deploy ID (workflowId/runId)     host   the holder's controller (worker) host
#   action  up | down                                       recipe the recipe dir (for people reading the file)
#   since   node epoch s the holder took it                 until  node epoch s its lease ends (renewals move it)
#   state   held | released                               lease  the holder's lease length in s (renewals keep it)
# Every decision reads the NODE's clock (`date +%s`), so no controller's clock skew matters. A lock is live while
# state=held and now < until; a stale lock (lease ran out, no renewal) may be taken by anyone. A renewal sets until =
# now + lease, so a lease further ahead than one lease length plus LOCK_SLACK_S cannot come from this clock: the
# file is corrupt (forged, or the node's clock jumped back since the holder's renewal) and is treated as stale; the
# acquire that takes it over says what it found (holder, until) and how it cleared it (record field `corrupt`). A released or taken-
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

# Slack on top of one lease before a lease that lies ahead is judged corrupt (an NTP step back of a few seconds is not).
LOCK_SLACK_S=60
# The longest lease pulse accepts (PULSE_LOCK_LEASE_S, worker/deps.ts): a recorded lease above it is not believed.
LOCK_MAX_LEASE_S=86400
l_deploy='' l_host='' l_action='' l_since=0 l_until=0 l_state='' l_lease=''
lock_read() {
  l_deploy='' l_host='' l_action='' l_since=0 l_until=0 l_state='' l_lease=''
  [[ -f $lock_file ]] || return 0
  local k v
  while IFS='=' read -r k v; do
    case $k in
      deploy) l_deploy=$v ;; host) l_host=$v ;; action) l_action=$v ;; state) l_state=$v ;;
      since) [[ $v =~ ^[0-9]{1,12}$ ]] && l_since=$((10#$v)) ;; lease) [[ $v =~ ^[0-9]{1,6}$ ]] && l_lease=$((10#$v)) ;;
      # Twelve digits reach the year 33658; a longer number (bash would overflow on it) is as far ahead as one can be.
      until) if [[ $v =~ ^[0-9]{1,12}$ ]]; then l_until=$((10#$v)); elif [[ $v =~ ^[0-9]+$ ]]; then l_until=999999999999; fi ;;
      # recipe= is for a person reading the file on the node: the lock's name already is its recipe dir's key.
    esac
  done <"$lock_file"
}

lock_iso() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ 2>/dev/null || printf '@%s' "$1"; }

# A held lock whose lease lies further ahead than one lease (the holder's recorded lease, else this request's, else
# the default 120 s; never above LOCK_MAX_LEASE_S) plus LOCK_SLACK_S: l_corrupt says what was found, else empty.
l_corrupt=
lock_judge() {
  l_corrupt=
  [[ $l_state == held ]] || return 0
  local lease=${l_lease:-}
  [[ $lease =~ ^[1-9][0-9]*$ ]] && ((lease <= LOCK_MAX_LEASE_S)) || lease=${PULSE_LOCK_LEASE_S:-120}
  [[ $lease =~ ^[1-9][0-9]*$ ]] || lease=120
  ((l_until > now + lease + LOCK_SLACK_S)) || return 0
  l_corrupt="corrupt lease: $(lock_holder), $((l_until - now)) s ahead of this node's clock ($(lock_iso "$now")), more than one lease (${lease} s) plus ${LOCK_SLACK_S} s: a forged lock file or a node clock that jumped back"
}

# The one line that names a holder: deploy id, controller host, since, lease until.
lock_holder() {
  printf 'deploy %s from controller %s (%s) since %s, lease until %s' "${l_deploy:-?}" "${l_host:-?}" "${l_action:-?}" \
    "$(lock_iso "$l_since")" "$(lock_iso "$l_until")"
}

lock_record() {
  local live=false
  [[ $l_state == held && $now -lt $l_until && -z $l_corrupt ]] && live=true
  pulse_record lock op="$op" ok:="$1" present:="$([[ -n $l_state ]] && echo true || echo false)" state="${l_state:-none}" \
    live:="$live" deploy="$l_deploy" host="$l_host" action="$l_action" since:="$l_since" until:="$l_until" now:="$now" \
    file="$lock_file" corrupt="$l_corrupt" "${@:2}"
}

lock_write() {
  local tmp
  tmp=$(mktemp "$lock_dir/.lock-tmp.XXXXXX") || pulse_fail "$PULSE_EXIT_TEMPORARY" "cannot write in $lock_dir"
  printf 'deploy=%s\nhost=%s\naction=%s\nrecipe=%s\nsince=%s\nuntil=%s\nstate=%s\nlease=%s\n' \
    "$1" "$2" "$3" "$PULSE_RECIPE_DIR" "$4" "$5" "$6" "$PULSE_LOCK_LEASE_S" >"$tmp" || { rm -f -- "$tmp"; pulse_fail "$PULSE_EXIT_TEMPORARY" "cannot write $tmp"; }
  mv -f -- "$tmp" "$lock_file" || { rm -f -- "$tmp"; pulse_fail "$PULSE_EXIT_TEMPORARY" "cannot replace $lock_file"; }
  l_deploy=$1 l_host=$2 l_action=$3 l_since=$4 l_until=$5 l_state=$6 l_lease=$PULSE_LOCK_LEASE_S l_corrupt=
}

if [[ $op == show ]]; then
  now=$(date +%s)
  lock_read
  lock_judge
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
lock_judge
until_new=$((now + PULSE_LOCK_LEASE_S))

case $op in
  acquire)
    if [[ $l_state == held && $l_deploy != "$me" && $now -lt $l_until && -z $l_corrupt ]]; then
      lock_record false
      pulse_fail "$PULSE_EXIT_REFUSED" "locked by $(lock_holder); nothing was changed"
    fi
    mine=false stale='' cleared=''
    [[ $l_state == held && $l_deploy == "$me" ]] && mine=true
    [[ $l_state == held && $l_deploy != "$me" ]] && stale=$l_deploy
    [[ -n $l_corrupt ]] && cleared="$l_corrupt; treated as stale: this deploy replaced it with its own lock (lease until $(lock_iso "$until_new"))"
    since=$now
    $mine && since=$l_since
    # A corrupt `since` (ahead of the clock, like its until) is not kept either.
    $mine && ((since > now)) && since=$now
    lock_write "$me" "$host" "${PULSE_LOCK_ACTION:-up}" "$since" "$until_new" held
    lock_record true resumed:="$mine" tookStaleFrom="$stale" cleared="$cleared"
    [[ -z $cleared ]] || printf 'pulse: %s\n' "$cleared" >&2
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
