# Shared by deploy/native/temporal-setup.sh and temporal-server.sh (sourced, not run).
# PULSE_HOME: the pulse checkout (default: two levels above this file). Fills every variable of temporal.env the
# environment leaves unset, and reads the database password from POSTGRES_PWD_FILE (a 0600 file, never an
# environment value of a unit file) into POSTGRES_PWD.
set -euo pipefail
PULSE_HOME=${PULSE_HOME:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
. "$PULSE_HOME/deploy/native/env-file.sh"
load_env_file "$PULSE_HOME/deploy/native/temporal.env"
export DYNAMIC_CONFIG_FILE_PATH=${DYNAMIC_CONFIG_FILE_PATH:-$PULSE_HOME/deploy/compose/dynamicconfig/pulse.yaml}
TEMPORAL_SERVER=${TEMPORAL_SERVER:-$PULSE_HOME/.tools/bin/temporal-server}
TEMPORAL_SQL_TOOL=${TEMPORAL_SQL_TOOL:-$PULSE_HOME/.tools/bin/temporal-sql-tool}
TEMPORAL_CLI=${TEMPORAL_CLI:-$PULSE_HOME/.tools/bin/temporal}
if [ -z "${POSTGRES_PWD:-}" ]; then
  : "${POSTGRES_PWD_FILE:?set POSTGRES_PWD_FILE to the file holding the database password}"
  POSTGRES_PWD=$(cat "$POSTGRES_PWD_FILE")
  export POSTGRES_PWD
fi
