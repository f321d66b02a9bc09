#!/usr/bin/env bash
# Regenerates api-types.d.ts from the service's OpenAPI document with openapi-typescript (a
# pinned version from the npm registry). `--check`: fail when the committed file is stale.
set -euo pipefail
cd "$(dirname "$0")"
version=7.13.0
tools=${OPENAPI_TS_DIR:-${TMPDIR:-/tmp}/careers-openapi-typescript-$version}
if [ ! -x "$tools/node_modules/.bin/openapi-typescript" ]; then
  mkdir -p "$tools"
  (cd "$tools" && npm init -y >/dev/null && npm install --no-audit --no-fund --silent "openapi-typescript@$version")
fi
bin=${CAREERS_API_BIN:-../../target/debug/careers-api}
work=$(mktemp -d)
"$bin" openapi > "$work/openapi.json"
"$tools/node_modules/.bin/openapi-typescript" "$work/openapi.json" -o "$work/api-types.d.ts" >/dev/null
if [ "${1:-}" = "--check" ]; then
  if ! diff -q "$work/api-types.d.ts" api-types.d.ts >/dev/null; then
    echo "clients/js/api-types.d.ts is stale: run clients/js/generate-types.sh" >&2
    exit 1
  fi
  echo "api-types.d.ts is up to date"
else
  cp "$work/api-types.d.ts" api-types.d.ts
fi
