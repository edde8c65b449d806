# Sourced by lib.sh and temporal-ui.sh (not run): the one reader of deploy/native/*.env files.
# load_env_file FILE: exports each KEY=value line of FILE whose KEY the environment leaves unset (the environment
# wins, as in a systemd unit's Environment=); blank lines and # comments are skipped; the value is taken as written.
load_env_file() {
  local key value
  while IFS='=' read -r key value; do
    case $key in ''|'#'*) continue ;; esac
    [ -n "${!key+x}" ] || export "$key=$value"
  done < "$1"
}
