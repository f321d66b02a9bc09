#!/usr/bin/env bash
# Instructions per request of one route, under callgrind (docs/PERFORMANCE.md, "Method").
#
#   python3 crates/bench/run.py --reads-only --hold --pairs sqlite-memory   # keeps a seeded
#                                                  # database; prints the held server's pid
#   crates/bench/callgrind.sh target/release <held api pid> [service|floor]
#
# Starts a second server (or floor) of <bindir> under valgrind on the held server's database and
# settings, logs in (EMAIL/PASS, default the seeded plain user), warms up with 3 s of `load`,
# counts 10 s of `load` on PATHQ (default the plain user's GET; FLOOR_USER_ID/FLOOR_EMPLOYER_ID
# for the floor, default 4 and 1) and prints the instructions per request.
set -euo pipefail
BIN=$1 SRC=$2 WHAT=${3:-service}
PATHQ=${PATHQ:-/identities/user/4}
OUT=$(mktemp -d)
PORT=$((40000 + RANDOM % 20000))
mapfile -t ENVS < <(tr '\0' '\n' < /proc/"$SRC"/environ |
  grep -E '^(APP_ENV|JWT_SIGNING_SECRET|RUST_LOG|LOG_FORMAT|DATABASE_URL|DATABASE_SCHEMA|REDIS_URL|REDIS_KEY_PREFIX)=')
if [ "$WHAT" = floor ]; then
  CMD=("$BIN/floor")
  ENVS+=("FLOOR_USER_ID=${FLOOR_USER_ID:-4}" "FLOOR_EMPLOYER_ID=${FLOOR_EMPLOYER_ID:-1}")
else
  CMD=("$BIN/careers-api" serve)
fi
env "${ENVS[@]}" BIND_ADDR=127.0.0.1:$PORT taskset -c 0 valgrind --tool=callgrind \
  --instr-atstart=no --separate-threads=no ${CALLGRIND_ARGS:-} --callgrind-out-file="$OUT/cg.out" "${CMD[@]}" \
  > "$OUT/stdout" 2> "$OUT/stderr" &
VPID=$!
for _ in $(seq 1 120); do curl -s -o /dev/null "http://127.0.0.1:$PORT/" && break; sleep 1; done
if [ "$WHAT" = floor ]; then
  TOKEN=$(awk '/^TOKEN/ {print $2}' "$OUT/stdout")
  [ "$PATHQ" = "${PATHQ#/org-user}" ] || TOKEN=$(awk '/^EMPLOYER_TOKEN/ {print $2}' "$OUT/stdout")
  COOKIE="jwt_access=$TOKEN"
else
  BODY=$(printf '{"email":"%s","password":"%s"}' "${EMAIL:-plain@example.com}" "${PASS:-plain-password-1}")
  COOKIE=$(curl -s -i -X POST -H 'Content-Type: application/json' -d "$BODY" \
    "http://127.0.0.1:$PORT/identities/sessions" | tr -d '\r' |
    sed -n 's/^[Ss]et-[Cc]ookie: \(jwt_access=[^;]*\).*/\1/p')
fi
load() {
  taskset -c 1 "$BIN/load" --addr "127.0.0.1:$PORT" --path "$PATHQ" --header "Cookie: $COOKIE" \
    --connections 4 --warmup 0 --duration "$1"
}
load 3 > /dev/null
callgrind_control -i on "$VPID" > /dev/null
load 10 > "$OUT/load.json"
callgrind_control -i off "$VPID" > /dev/null
callgrind_control -d "$VPID" > /dev/null
kill "$VPID"; wait "$VPID" || true
python3 - "$OUT" <<'PY'
import glob, json, re, subprocess, sys
out = sys.argv[1]
load = json.load(open(f"{out}/load.json"))
dump = sorted(glob.glob(f"{out}/cg.out.*"))[0]
text = subprocess.run(["callgrind_annotate", dump], capture_output=True, text=True).stdout
total = int(re.search(r"([\d,]+) \(100\.0%\)\s+PROGRAM TOTALS", text).group(1).replace(",", ""))
print(f"{load['requests']} requests {load['statuses']}, {total} instructions, "
      f"{total / load['requests']:.0f} per request; profile: {dump}")
PY
