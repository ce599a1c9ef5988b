#!/usr/bin/env bash
# Starts Surveyor on one machine: ingest with an embedded JetStream server,
# then every worker binary that exists. Ctrl-C (or SIGTERM) stops the workers
# first, so they can finish or hand back their jobs, and NATS last.
set -euo pipefail
cd "$(dirname "$0")/.."

export NATS_URL="${NATS_URL:-nats://127.0.0.1:4222}"
export HTTP_ADDR="${HTTP_ADDR:-127.0.0.1:8080}"
export DATA_DIR="${DATA_DIR:-./data}"
mkdir -p "$DATA_DIR"

# Children get process groups of their own, so Ctrl-C reaches only this
# script, which then stops them in order.
set -m
ingest_pid=""
workers=()

stop() {
	trap - INT TERM
	echo "stopping workers..." >&2
	for pid in "${workers[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
	for pid in "${workers[@]}"; do wait "$pid" 2>/dev/null || true; done
	if [ -n "$ingest_pid" ]; then
		echo "stopping ingest and NATS..." >&2
		kill -TERM "$ingest_pid" 2>/dev/null || true
		wait "$ingest_pid" 2>/dev/null || true
	fi
	echo "stopped." >&2
	exit 0
}
trap stop INT TERM

EMBEDDED_NATS=true bin/ingest &
ingest_pid=$!

for _ in $(seq 1 100); do
	# bash's /dev/tcp needs no curl on a fresh machine
	if (exec 3<>"/dev/tcp/${HTTP_ADDR%:*}/${HTTP_ADDR##*:}") 2>/dev/null; then break; fi
	if ! kill -0 "$ingest_pid" 2>/dev/null; then echo "ingest failed to start" >&2; exit 1; fi
	sleep 0.1
done

port=9101
for w in scanner sitemapper emailcheck; do
	if [ -x "bin/$w" ]; then
		ADMIN_ADDR="${ADMIN_ADDR_PREFIX:-127.0.0.1}:$port" "bin/$w" &
		workers+=($!)
	fi
	port=$((port + 1))
done

cat >&2 <<MSG

Surveyor is running.
  API:      http://$HTTP_ADDR   (OpenAPI: http://$HTTP_ADDR/openapi.json)
  NATS:     $NATS_URL   (JetStream data in $DATA_DIR)
  Workers:  ${#workers[@]} started (admin on 127.0.0.1:9101-9103)
Press Ctrl-C to stop.

MSG

# Wait until a child exits on its own or a signal arrives.
wait -n || true
stop
