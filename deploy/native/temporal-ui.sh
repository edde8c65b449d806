#!/usr/bin/env bash
# Starts the built Temporal Web UI server (scripts/setup.sh: the compose file's temporalio/ui version) on
# deploy/native/ui (the image's config template, plus the listen address: TEMPORAL_UI_HOST, default 127.0.0.1) with
# deploy/native/temporal-ui.env (the environment overrides it).
set -euo pipefail
PULSE_HOME=${PULSE_HOME:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
. "$PULSE_HOME/deploy/native/env-file.sh"
load_env_file "$PULSE_HOME/deploy/native/temporal-ui.env"
exec "${TEMPORAL_UI_SERVER:-$PULSE_HOME/.tools/bin/temporal-ui-server}" --root "$PULSE_HOME/deploy/native" --config ui --env docker start
