#!/usr/bin/env bash
# Creates (or updates) the PostgreSQL role the Temporal server logs in as: $POSTGRES_USER (temporal) with LOGIN and
# CREATEDB (temporal-setup.sh creates the two databases it then owns) and the password from $POSTGRES_PWD_FILE.
# Idempotent. Run it as the operator who owns the password file; PSQL says how to reach the server as a superuser:
#
#   deploy/native/postgres-role.sh                                   # PSQL defaults to: sudo -u postgres psql
#   PSQL="psql -h /run/postgresql -U postgres" deploy/native/postgres-role.sh
#
# The password goes to psql on stdin, never on a command line.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
read -r -a psql <<<"${PSQL:-sudo -u postgres psql}"
role=${POSTGRES_USER//\"/}
"${psql[@]}" -v ON_ERROR_STOP=1 -q -d postgres <<SQL
DO \$\$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '${role}') THEN CREATE ROLE "${role}"; END IF;
END \$\$;
ALTER ROLE "${role}" LOGIN CREATEDB PASSWORD '${POSTGRES_PWD//\'/\'\'}';
SQL
