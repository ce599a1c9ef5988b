#!/usr/bin/env bash
# make bench: the intake benchmark of the pipeline issue, then the Go
# benchmarks of the other packages, each printed against its own baseline.
#
# Intake: POST /v1/scan over loopback with wrk, every request a new URL (so
# a new job), 64 connections. The bare server (bin/ingest-bare: the same
# handler and validation, storing nothing) and ingest (bin/ingest with an
# embedded, file-backed JetStream in a fresh directory) alternate in the
# same run, each pinned to core 0 while wrk runs on core 1. CPU microseconds
# per request come from the server's utime+stime in /proc/<pid>/stat: on a
# shared machine that is steadier than requests per second. The summary is
# the median of the rounds.
#
# Tunables: BENCH_ROUNDS (3), BENCH_DURATION (10s), BENCH_WARMUP (2s),
# BENCH_CONNECTIONS (64), BENCH_SKIP_GO=1 to skip the Go benchmarks.
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS="${BENCH_ROUNDS:-3}"
DURATION="${BENCH_DURATION:-10s}"
WARMUP="${BENCH_WARMUP:-2s}"
CONNS="${BENCH_CONNECTIONS:-64}"
GO="${GO:-go}"

for b in bin/ingest bin/ingest-bare; do
	[ -x "$b" ] || { echo "bench: $b missing; run make build" >&2; exit 1; }
done

if ! command -v wrk >/dev/null; then
	echo "bench: installing wrk from Debian's packages" >&2
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo="sudo"
	$sudo apt-get update && $sudo apt-get install -y wrk
fi

# Pin the server and the load generator to different cores when possible.
pin_server=() pin_client=()
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
	pin_server=(taskset -c 0) pin_client=(taskset -c 1)
else
	echo "bench: taskset or a second core missing; running unpinned" >&2
fi

work="$(mktemp -d)"
server_pid=""
cleanup() {
	if [ -n "$server_pid" ]; then kill -TERM "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
	rm -rf "$work"
}
trap cleanup EXIT

ticks="$(getconf CLK_TCK)"

# cpu_ticks prints utime+stime of a process (fields 14 and 15 after the
# command name, which is in parentheses and may hold spaces).
cpu_ticks() { sed 's/^.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'; }

# start_server VARIANT RUN: starts the server on a free port, sets
# server_pid and addr.
start_server() {
	local variant="$1" run="$2" log="$work/$1.$2.log"
	case "$variant" in
	bare)
		HTTP_ADDR=127.0.0.1:0 "${pin_server[@]}" bin/ingest-bare 2>"$log" &
		;;
	ingest)
		EMBEDDED_NATS=true NATS_URL=nats://127.0.0.1:0 DATA_DIR="$work/data.$run" \
			HTTP_ADDR=127.0.0.1:0 LOG_LEVEL=warn "${pin_server[@]}" bin/ingest 2>"$log" >/dev/null &
		;;
	esac
	server_pid=$!
	addr=""
	for _ in $(seq 1 200); do
		addr="$(sed -n 's/.*listening on http:\/\/\([0-9.:]*\).*/\1/p' "$log" | head -1)"
		[ -n "$addr" ] && return 0
		kill -0 "$server_pid" 2>/dev/null || break
		sleep 0.05
	done
	echo "bench: $variant did not start:" >&2
	cat "$log" >&2
	exit 1
}

stop_server() {
	kill -TERM "$server_pid" 2>/dev/null || true
	wait "$server_pid" 2>/dev/null || true
	server_pid=""
}

# one VARIANT RUN: a warm-up, then the measured wrk run; appends a line to
# $work/results.
one() {
	local variant="$1" run="$2" nonce="b$$r$2$1"
	start_server "$variant" "$run"
	"${pin_client[@]}" wrk -t1 -c"$CONNS" -d"$WARMUP" -s scripts/intake.lua "http://$addr" -- "${nonce}w" >/dev/null
	local before after out
	before="$(cpu_ticks "$server_pid")"
	out="$("${pin_client[@]}" wrk -t1 -c"$CONNS" -d"$DURATION" -s scripts/intake.lua "http://$addr" -- "$nonce" | grep '^RESULT')"
	after="$(cpu_ticks "$server_pid")"
	stop_server
	echo "$variant $run $((after - before)) $out" >>"$work/results"
	awk -v t="$ticks" '{
		for (i = 5; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		rps = v["requests"] / (v["duration_us"] / 1e6)
		cpu = $3 / t * 1e6 / (v["requests"] > 0 ? v["requests"] : 1)
		printf "  %-7s run %d: %8.0f req/s  p50 %6.2f ms  p99 %6.2f ms  non-2xx %d  errors %d  CPU %6.1f us/req\n",
			$1, $2, rps, v["p50_us"] / 1000, v["p99_us"] / 1000, v["non2xx"],
			v["connect"] + v["read"] + v["write"] + v["timeout"], cpu
	}' <<<"$variant $run $((after - before)) $out"
}

echo "== intake: POST /v1/scan, distinct URLs, $CONNS connections, $DURATION per run, $ROUNDS rounds"
: >"$work/results"
for run in $(seq 1 "$ROUNDS"); do
	one bare "$run"
	one ingest "$run"
done

# The summary takes the median of the rounds (the issue's target is the
# median of three): req/s, p99 and the ratio of each round's ingest to the
# bare run just before it. CPU per request is over all rounds.
summary="$work/summary"
awk -v t="$ticks" '
function median(a, n,    i, j, x) {
	for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{
	for (i = 5; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
	r = v["requests"] / (v["duration_us"] / 1e6)
	if ($1 == "bare") { nb++; rb[nb] = r; pb[nb] = v["p99_us"]; bare[$2] = r }
	else { ni++; ri[ni] = r; pi[ni] = v["p99_us"]; ratio[ni] = r / bare[$2] }
	bad[$1] += v["non2xx"] + v["connect"] + v["read"] + v["write"] + v["timeout"]
	cpu[$1] += $3 / t * 1e6
	reqs[$1] += v["requests"]
}
END {
	p99i = median(pi, ni)
	printf "intake bare    %8.0f req/s  p99 %5.2f ms  CPU %6.1f us/req  non-2xx+errors %d\n", median(rb, nb), median(pb, nb) / 1000, cpu["bare"] / reqs["bare"], bad["bare"]
	printf "intake ingest  %8.0f req/s  p99 %5.2f ms  CPU %6.1f us/req  non-2xx+errors %d\n", median(ri, ni), p99i / 1000, cpu["ingest"] / reqs["ingest"], bad["ingest"]
	printf "intake ratio   ingest/bare req/s %.2f (target >= 0.50)   bare/ingest CPU per request %.2f   ingest p99 %s 10 ms   (medians of %d rounds)\n",
		median(ratio, ni), (cpu["bare"] / reqs["bare"]) / (cpu["ingest"] / reqs["ingest"]), p99i < 10000 ? "<" : ">=", ni
	if (bad["bare"] + bad["ingest"] > 0) print "intake WARNING: some requests were not answered 2xx"
}' "$work/results" | tee "$summary"

# Go benchmarks of the other packages, each reporting its baseline ratio
# as a custom metric (the fingerprint engine's also its slowest page of the
# corpus, named on a line of its own). Only packages that exist are run.
if [ "${BENCH_SKIP_GO:-0}" != 1 ]; then
	# Each package with its -benchtime: the engine's benchmarks time one
	# page per iteration, so one iteration would time a single page of the
	# corpus; the others loop over their whole workload in one iteration
	# (inspect's takes milliseconds, so it runs for a second).
	gobench=(
		"./pkg/fingerprint 3s"
		"./services/emailcheck/internal/verify 1x"
		"./services/sitemapper/internal/crawl 1x"
		"./services/scanner/internal/scan 1x"
		"./services/scanner/internal/inspect 1s"
	)
	for entry in "${gobench[@]}"; do
		read -r pkg benchtime <<<"$entry"
		[ -d "$pkg" ] || continue
		echo "== go benchmarks: $pkg"
		"$GO" test -run XXX -bench . -benchtime "$benchtime" -timeout 5m "$pkg" | tee "$work/go.out" || echo "bench: $pkg failed" >&2
		awk -v pkg="$pkg" '/^Benchmark/ { print pkg, $0 }' "$work/go.out" >>"$work/gobench"
		# The engine's benchmarks name their slowest page on a log line of
		# each round; the last round's (the longest) is the one to report.
		awk -v pkg="$pkg" '
			/^--- BENCH: / { name = $3 }
			/slowest page:/ { sub(/^.*slowest page:/, "slowest page:"); last[name] = $0 }
			END { for (n in last) printf "%-40s %-28s %s\n", pkg, n, last[n] }' "$work/go.out" >>"$work/worst"
	done
	if [ -d test/e2e ]; then
		echo "== go benchmarks: ./test/e2e"
		# Three iterations: each alternates a default-concurrency round and a
		# concurrency-1 round, and the ratio of their sums is steadier on a
		# machine whose other tenants come and go.
		SURVEYOR_BIN="$PWD/bin" "$GO" test -run XXX -bench . -benchtime 3x -timeout 5m ./test/e2e/... | tee "$work/go.out" || echo "bench: e2e failed" >&2
		awk '/^Benchmark/ { print "./test/e2e", $0 }' "$work/go.out" >>"$work/gobench"
	fi
	if [ -s "$work/gobench" ]; then
		# Custom metrics only: the value/unit pairs after the iteration count
		# that are not Go's standard time and allocation figures.
		awk '{
			for (i = 4; i + 1 <= NF; i += 2) {
				unit = $(i + 1)
				if (unit == "ns/op" || unit == "B/op" || unit == "allocs/op" || unit == "MB/s") continue
				printf "%-40s %-28s %-24s %s\n", $1, $2, unit, $i
			}
		}' "$work/gobench" >>"$summary.go"
	fi
fi

echo
echo "================ summary ================"
cat "$summary"
if [ -s "$summary.go" ]; then
	echo
	printf "%-40s %-28s %-24s %s\n" package benchmark metric value
	cat "$summary.go"
fi
if [ -s "$work/worst" ]; then
	echo
	sort "$work/worst"
fi
