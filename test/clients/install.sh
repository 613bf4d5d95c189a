#!/usr/bin/env bash
# Installs the real clients test/clients runs against `strata serve`
# (issue 5, item 5). .ci/run calls it; it is safe to run again.
#   psql      postgresql-client (Debian)
#   psycopg2  python3-psycopg2 (Debian; only /usr/bin/python3 sees it)
#   node-pg   nodejs + npm (Debian), then pg from npm at the locked version
# The Go clients (pgx, lib/pq) come from go.mod and need nothing here.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
sudo=""
if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
missing=()
command -v psql >/dev/null || missing+=(postgresql-client)
/usr/bin/python3 -c 'import psycopg2' 2>/dev/null || missing+=(python3-psycopg2)
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
if [ ${#missing[@]} -gt 0 ]; then
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
fi
(cd "$here/node" && npm ci --no-audit --no-fund --loglevel=error)
psql --version
/usr/bin/python3 -c 'import psycopg2; print("psycopg2", psycopg2.__version__)'
echo "node $(node --version), pg $(node -p 'require("'"$here"'/node/node_modules/pg/package.json").version')"
