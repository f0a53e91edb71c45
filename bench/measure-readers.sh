#!/usr/bin/env bash
# Peak RSS and wall time of the reading commands on a big archive (see bench/make-big-archive.js):
#   bench/measure-readers.sh BIN A.zip B.zip
# BIN is a built CLI (bin/rabbit-export.js of this or an older checkout). One run of each.
set -uo pipefail
bin=$1 a=$2 b=$3
measure() {
  local label=$1; shift
  local log; log=$(mktemp)
  /usr/bin/time -f '%M %e' -o "$log" "$@" >/dev/null 2>"$log.err"
  local code=$?
  read -r kb secs < <(tail -n 1 "$log")
  printf '%-8s exit %-3s peak RSS %6d MiB  %7ss  %s\n' "$label" "$code" $((kb / 1024)) "$secs" "$(head -c 160 "$log.err" | tr '\n' ' ')"
  rm -f "$log" "$log.err"
}
measure verify node "$bin" verify "$a"
measure ls node "$bin" ls "$a"
measure diff node "$bin" diff "$a" "$b"
# view: serve, fetch one element from the middle of the archive, then stop with SIGTERM.
log=$(mktemp)
port=$((20000 + RANDOM % 20000))
/usr/bin/time -f '%M %e' -o "$log" node "$bin" view "$a" --port "$port" >/dev/null 2>&1 &
timer=$!
for _ in $(seq 1 600); do curl -sfI -o /dev/null "http://127.0.0.1:$port/manifest.json" --max-time 5 && break; sleep 1; done
name=$(unzip -Z1 "$a" 2>/dev/null | sed -n '500000p')
status=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/$name")
kill -TERM "$(pgrep -P "$timer")"
wait "$timer"
read -r kb secs < <(tail -n 1 "$log")
printf '%-8s GET %s  peak RSS %6d MiB  %7ss (start-up, one request, stop)\n' view "$status" $((kb / 1024)) "$secs"
rm -f "$log"
