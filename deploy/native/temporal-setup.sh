#!/usr/bin/env bash
# What temporalio/auto-setup does around its server, for the native setup (docs/PRODUCTION.md "C. native"):
#   temporal-setup.sh schema      create both databases and migrate them to the schema of the built server
#   temporal-setup.sh namespace   wait for the frontend, then register $DEFAULT_NAMESPACE ($DEFAULT_NAMESPACE_RETENTION)
# Both are idempotent (a restart runs them again). Settings: deploy/native/temporal.env and the environment.
# pulse registers its own search attributes at connect (compose: SKIP_ADD_CUSTOM_SEARCH_ATTRIBUTES=true).
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

schema() {
  # The schema files ship with the build (scripts/setup.sh copies them next to the binaries).
  local schemas
  schemas=$(dirname "$(readlink -f "$TEMPORAL_SQL_TOOL")")/../schema/postgresql/v12
  export SQL_PASSWORD=$POSTGRES_PWD
  sql() { "$TEMPORAL_SQL_TOOL" --plugin "$DB" --ep "$POSTGRES_SEEDS" -p "$DB_PORT" -u "$POSTGRES_USER" --db "$1" "${@:2}"; }
  for pair in "$DBNAME:temporal" "$VISIBILITY_DBNAME:visibility"; do
    local db=${pair%%:*} dir=${pair#*:}
    # CREATE DATABASE has no IF NOT EXISTS: an existing database is kept as it is (a restart runs this again).
    local out
    if ! out=$(sql "$db" create 2>&1) && ! grep -q 'already exists' <<<"$out"; then
      echo "$out" >&2
      exit 1
    fi
    sql "$db" setup-schema -v 0.0
    sql "$db" update-schema -d "$schemas/$dir/versioned"
  done
}

namespace() {
  local address=${TEMPORAL_ADDRESS:-$BIND_ON_IP:$FRONTEND_GRPC_PORT} tries=0
  until "$TEMPORAL_CLI" operator cluster health --address "$address" 2>/dev/null | grep -q SERVING; do
    tries=$((tries + 1))
    [ "$tries" -lt 240 ] || { echo "temporal-setup: the frontend at $address did not answer within 120 s" >&2; exit 1; }
    sleep 0.5
  done
  if "$TEMPORAL_CLI" operator namespace describe --namespace "$DEFAULT_NAMESPACE" --address "$address" >/dev/null 2>&1; then
    return 0
  fi
  "$TEMPORAL_CLI" operator namespace create --namespace "$DEFAULT_NAMESPACE" --retention "$DEFAULT_NAMESPACE_RETENTION" \
    --description "Default namespace for Temporal Server." --address "$address"
}

case ${1:-} in
  schema) schema ;;
  namespace) namespace ;;
  *) echo "usage: $0 schema|namespace" >&2; exit 2 ;;
esac
