#!/usr/bin/env bash
# Lints the service's OpenAPI document with Redocly's recommended rules (redocly.yaml; a pinned
# @redocly/cli from the npm registry, installed once outside the repo like generate-types.sh's
# tool), less the probes' entries of .redocly.lint-ignore.yaml. Fails on any error or warning.
set -euo pipefail
cd "$(dirname "$0")"
version=2.77.0
tools=${REDOCLY_DIR:-${TMPDIR:-/tmp}/careers-redocly-$version}
if [ ! -x "$tools/node_modules/.bin/redocly" ]; then
  mkdir -p "$tools"
  (cd "$tools" && npm init -y >/dev/null && npm install --no-audit --no-fund --silent "@redocly/cli@$version")
fi
# `--install`: only the tool (CI installs it ahead, in the background).
[ "${1:-}" = --install ] && exit 0
bin=${CAREERS_API_BIN:-../../target/debug/careers-api}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$bin" openapi > "$work/openapi.json"
# The ignore file names the document by its path beside the configuration.
cp redocly.yaml .redocly.lint-ignore.yaml "$work/"
cd "$work"
out=$(REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true \
  "$tools/node_modules/.bin/redocly" lint --config redocly.yaml --format stylish openapi.json 2>&1) ||
  { echo "$out" >&2; exit 1; }
if grep -qE "^ +[0-9]+:[0-9]+ +warning" <<<"$out"; then
  echo "$out" >&2
  echo "the OpenAPI document has lint warnings" >&2
  exit 1
fi
echo "the OpenAPI document passes Redocly's recommended rules"
