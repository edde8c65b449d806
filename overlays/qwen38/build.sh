#!/usr/bin/env bash
# Builds an overlay folder for `pulse model up --overlay DIR`:
#   overlays/qwen38/build.sh --out DIR --set NAME[,NAME...]
# writes DIR/docker-args.txt (all pairs of the named sets on one line) and DIR/manifest.json (what was set, from
# which catalog entry, when). The named sets live in catalog.tsv beside this script.
#
# Why the care with files: a running container keeps the inode of a bind-mounted file. So a changed file is
# written to a temp file and renamed over the old one (a NEW inode, which pulse's mount check sees), and an
# unchanged one is left alone (same inode, same bytes, same overlay-sha256: no needless restart). "Unchanged"
# for manifest.json ignores its builtAt line, so a rebuild with the same sets keeps the old file and its time.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
catalog="${PULSE_OVERLAY_CATALOG:-$here/catalog.tsv}"

die() { printf 'build.sh: %s\n' "$1" >&2; exit "${2:-2}"; }
usage() { die "usage: build.sh --out DIR --set NAME[,NAME...]  (known sets: $(known_names))"; }
json_str() { local s=$1; s=${s//\\/\\\\}; s=${s//\"/\\\"}; printf '"%s"' "$s"; }

declare -A desc=() pairs=()
order=()
while IFS=$'\t' read -r name d p || [[ -n ${name:-} ]]; do
  [[ -z $name || $name == \#* ]] && continue
  [[ -n ${pairs[$name]+x} ]] && die "catalog $catalog: set \"$name\" occurs twice" 3
  [[ -n $p ]] || die "catalog $catalog: set \"$name\" has no pairs" 3
  desc[$name]=$d; pairs[$name]=$p; order+=("$name")
done < "$catalog"
known_names() { local IFS=','; printf '%s' "${order[*]}" | sed 's/,/, /g'; }

out='' sets=''
while (($#)); do
  case $1 in
    --out) (($# >= 2)) || usage; out=$2; shift 2 ;;
    --set) (($# >= 2)) || usage; sets="${sets:+$sets,}$2"; shift 2 ;;
    -h|--help) printf 'usage: build.sh --out DIR --set NAME[,NAME...]\nknown sets: %s\n' "$(known_names)"; exit 0 ;;
    *) die "unknown argument \"$1\"" ;;
  esac
done
[[ -n $out && -n $sets ]] || usage

chosen=()
IFS=', ' read -r -a requested <<< "$sets"
for name in "${requested[@]}"; do
  [[ -z $name ]] && continue
  [[ -n ${pairs[$name]+x} ]] || die "unknown set \"$name\"; known sets: $(known_names)"
  for c in "${chosen[@]}"; do [[ $c == "$name" ]] && die "set \"$name\" is given twice"; done
  chosen+=("$name")
done
((${#chosen[@]})) || usage

# Each word must be safe unquoted: start.sh pastes EXTRA_DOCKER_ARGS into a generated bash script.
words=()
for name in "${chosen[@]}"; do
  read -r -a w <<< "${pairs[$name]}"
  for word in "${w[@]}"; do
    [[ $word =~ ^[A-Za-z0-9_./:=,@+%-]+$ ]] || die "catalog set \"$name\": \"$word\" holds a character that is not allowed" 3
    words+=("$word")
  done
done

args_text="${words[*]}"$'\n'
manifest_body() {
  printf '{\n  "builder": "overlays/qwen38/build.sh",\n  "catalog": %s,\n  "sets": [\n' "$(json_str "$(basename "$catalog")")"
  local i=0 name
  for name in "${chosen[@]}"; do
    ((i++)) && printf ',\n'
    printf '    {"name": %s, "description": %s, "pairs": %s}' "$(json_str "$name")" "$(json_str "${desc[$name]}")" "$(json_str "${pairs[$name]}")"
  done
  printf '\n  ],\n  "dockerArgs": %s,\n' "$(json_str "${words[*]}")"
}
body=$(manifest_body)
manifest_text="$body"$'\n'"  \"builtAt\": \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\""$'\n}\n'

mkdir -p "$out"
# replace FILE NEW-TEXT COMPARE-TEXT-OF-OLD: write only when different, always by rename (a new inode).
replace() {
  local file=$1 text=$2 same=$3 tmp
  if [[ -f $file && $same == yes ]]; then printf 'unchanged %s\n' "$file"; return; fi
  tmp=$(mktemp "$file.tmp.XXXXXX")
  printf '%s' "$text" > "$tmp"
  chmod 0644 "$tmp"
  mv -f "$tmp" "$file"
  printf 'wrote %s\n' "$file"
}
args_same=no; [[ -f $out/docker-args.txt ]] && [[ "$(cat "$out/docker-args.txt"; printf x)" == "${args_text}x" ]] && args_same=yes
man_same=no
if [[ -f $out/manifest.json ]]; then
  old=$(grep -v '^  "builtAt": ' "$out/manifest.json" || true)
  new=$(printf '%s' "$manifest_text" | grep -v '^  "builtAt": ')
  [[ $old == "$new" ]] && man_same=yes
fi
replace "$out/docker-args.txt" "$args_text" "$args_same"
replace "$out/manifest.json" "$manifest_text" "$man_same"
