#!/usr/bin/env bash
# Starts the built Temporal server on deploy/native/temporal.yaml (settings: deploy/native/temporal.env and the
# environment; the password from POSTGRES_PWD_FILE). Extra arguments go to `start`, e.g. `--service history` to
# run one service per process (default: all four in this one).
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
exec "$TEMPORAL_SERVER" --root "$PULSE_HOME/deploy" --config native --env temporal --allow-no-auth start "$@"
