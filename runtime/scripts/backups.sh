# backups: the .env backups that write-env keeps on a node (.env.pulse-bak-*), read-only, for `rollback --list` and
# the completion of `rollback --to`. Of each file only its `# pulse-profile:` and `# pulse-rendered:` header lines are
# read (never a key line, so no secret can leave the node); a symlink or any other non-regular entry is listed with
# its kind and not read at all (a rollback refuses it). A name with a control character (a newline, a tab) is not
# listed: the listing is one line per entry, so such a name would split into a forged entry of its own choosing, and
# write-env never makes one (its names are .env.pulse-bak-<UTC stamp>[-n]).
# Inputs: PULSE_RECIPES (one recipe per line: name<TAB>dir<TAB>container).
# Records: backup{recipe,name,type,size,mtime,uid,profile,rendered} per entry (type: find's %y letter; mtime: epoch
# seconds), then backups-end{count}.
count=0
while IFS=$'\t' read -r r_name r_dir _; do
  [[ -n $r_name && -d $r_dir ]] || continue
  while IFS=$'\t' read -r name kind size mtime uid; do
    [[ -n $name ]] || continue
    profile='' rendered=''
    if [[ $kind == f && -r $r_dir/$name ]]; then
      # the header is at the top: a bounded read, and only the two comment lines are kept
      header=$(head -c 4096 -- "$r_dir/$name" </dev/null | grep -E '^# pulse-(profile|rendered): ' || true)
      profile=$(sed -n 's/^# pulse-profile: //p' <<<"$header" | head -n 1)
      rendered=$(sed -n 's/^# pulse-rendered: //p' <<<"$header" | head -n 1)
    fi
    pulse_record backup recipe="$r_name" name="$name" type="$kind" size:="${size:-0}" mtime="${mtime%%.*}" uid:="${uid:-0}" profile="${profile:0:80}" rendered="${rendered:0:40}"
    count=$((count + 1))
  done < <(find "$r_dir" -maxdepth 1 -name '.env.pulse-bak-*' ! -name '.env.pulse-bak-tmp.*' ! -name '*[[:cntrl:]]*' -printf '%f\t%y\t%s\t%T@\t%U\n' 2>/dev/null </dev/null | sort -r)
done <<<"${PULSE_RECIPES:-}"
pulse_record backups-end count:="$count"
