# mkdir: create the profile's pulse-mkdir directories (mkdir -p, so a second run changes nothing).
# Input: PULSE_MKDIRS, one absolute directory per line. Records: mkdir{path,created}.
umask 022 # the container (another uid, maybe) reads and writes these caches
while IFS= read -r dir; do
  [[ -n $dir ]] || continue
  [[ $dir == /* ]] || pulse_fail "$PULSE_EXIT_PRECONDITION" "pulse-mkdir $dir is not an absolute path"
  created=false
  [[ -d $dir ]] || created=true
  mkdir -p -- "$dir" 2>/dev/null || pulse_fail "$PULSE_EXIT_PRECONDITION" "cannot create directory $dir"
  pulse_record mkdir path="$dir" created:="$created"
done <<<"${PULSE_MKDIRS:-}"
