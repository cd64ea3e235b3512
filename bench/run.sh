#!/usr/bin/env bash
# Load benchmark: ferromcp's bench server (McpServer with the tools `add` and `echo`) against an
# rmcp 3.11 server with the same tools, the raw floor (a hand-written JSON-RPC loop, stdio only)
# and ferromcp's full demo server (`ferromcp serve`); every scenario interleaved in one run,
# medians of 3 rounds, ratios of ferromcp to each, plus server instructions per call under
# callgrind. See docs/BENCHMARKS.md and bench/README.md.
#
#   bench/run.sh                 # full run (a few minutes)
#   bench/run.sh --quick         # smoke run: small counts, 1 round, a few seconds
#   bench/run.sh --rounds 5      # any other ferromcp-bench option is passed through
#
# Environment: CALLGRIND_CALLS (default 2000; 0 = skip callgrind), DRIVER_CPU / SERVER_CPU
# (default 0 / 1 when there are two CPUs and taskset exists; empty = no pinning),
# CARGO_TARGET_DIR (default target), REDIS_URL (set: the scale-out rows, two nodes of
# ferromcp-bench-redis-node sharing that Redis; give it a Redis of its own, as the row counts
# every command the Redis serves).
#
# Issue 23's gateway row (`--only gateway`): the bench server's calls direct against the same
# calls through `ferromcp gateway` with the bench server as its stdio backend (`--gateway`).
#
# Issue 19's rows (2026-07-28, big payloads, growth curves, binary size) print after the main
# table; their CSV and the curves' SVGs go to target/bench-results/ (copy the SVGs to
# docs/benchmarks/ when the run goes into docs/BENCHMARKS.md). A second invocation measures
# the stdio-only server (ferromcp-bench-stdio, its own package so that it is built with only
# the features it needs) against rmcp: cold start, RSS at rest and stripped size.
set -euo pipefail
cd "$(dirname "$0")/.."

T=${CARGO_TARGET_DIR:-target}
cargo build --release -p ferromcp-cli -p ferromcp-bench
# On its own: built with the others, cargo would unify ferromcp-server's features.
cargo build --release -p ferromcp-bench-stdio
[ -n "${REDIS_URL:-}" ] && cargo build --release -p ferromcp-bench-redis-node
cargo build --release --manifest-path bench/peers/rmcp-server/Cargo.toml --target-dir "$T/peers"

F=$T/release/ferromcp-bench-server
D=$T/release/ferromcp
RAW=$T/release/ferromcp-raw-floor
S=$T/release/ferromcp-bench-stdio
redis=()
[ -n "${REDIS_URL:-}" ] && redis=(--http-redis "$T/release/ferromcp-bench-redis-node http {addr} --redis $REDIS_URL")
R=$T/peers/release/rmcp-bench-server
OUT=$T/bench-results
mkdir -p "$OUT"
STAMP=$(date -u +%Y%m%dT%H%M%SZ)

quick=0
for a in "$@"; do [ "$a" = --quick ] && quick=1; done
calls=${CALLGRIND_CALLS:-2000}
[ "$quick" = 1 ] && calls=${CALLGRIND_CALLS:-100}

driver=()
pin=()
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
    DRIVER_CPU=${DRIVER_CPU-0}
    SERVER_CPU=${SERVER_CPU-1}
else
    DRIVER_CPU=${DRIVER_CPU-}
    SERVER_CPU=${SERVER_CPU-}
fi
[ -n "$DRIVER_CPU" ] && driver=(taskset -c "$DRIVER_CPU")
[ -n "$SERVER_CPU" ] && pin=(--server-cpu "$SERVER_CPU")

cg=()
if [ "$calls" != 0 ] && command -v valgrind >/dev/null; then
    cg=(--callgrind "$calls" --callgrind-dir "$OUT/callgrind-$STAMP")
fi

{
    echo "# ferromcp-bench $STAMP on $(nproc) CPUs ($(uname -r)); load before: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "ferromcp built from $(git rev-parse --short HEAD 2>/dev/null || echo '?')" \
        "($(git status --porcelain -- crates 2>/dev/null | wc -l) files under crates/ differ from it)"
    echo
    "${driver[@]}" "$T/release/ferromcp-bench" "${pin[@]}" "${cg[@]}" "$@" \
        --csv "$OUT/$STAMP.csv" --plots "$OUT/plots-$STAMP" \
        --server ferromcp --stdio "$F stdio" --http "$F http {addr}" \
        --http-stateless "$F http {addr} --stateless" --registry "${redis[@]}" \
        --gateway "$D gateway" \
        --server rmcp --stdio "$R stdio" --http "$R http {addr}" \
        --http-stateless "$R http {addr} --stateless" --registry \
        --server raw --stdio "$RAW" --http "$RAW http {addr}" \
        --http-stateless "$RAW http {addr}" \
        --server ferromcp-demo --stdio "$D serve" --http "$D serve --http {addr} --max-sessions-per-peer 4096" \
        --http-stateless "$D serve --http {addr} --stateless" --skip payload,idle-curve,latency-curve
    echo
    echo "## The stdio-only server (ferromcp-bench-stdio) against rmcp"
    echo
    "${driver[@]}" "$T/release/ferromcp-bench" "${pin[@]}" "$@" --only cold-start,stdio-seq,binary-size \
        --server ferromcp-stdio-only --stdio "$S" --server rmcp --stdio "$R stdio"
} | tee "$OUT/$STAMP.md"

if [ ${#cg[@]} -gt 0 ] && command -v callgrind_annotate >/dev/null; then
    for side in stdio http; do
        file="$OUT/callgrind-$STAMP/ferromcp-$side-$calls.out"
        [ -f "$file" ] || continue
        echo
        echo "## ferromcp (bench server) $side: top functions by own instructions ($calls calls + start-up)"
        callgrind_annotate "$file" 2>/dev/null | sed -n '/file:function/,$p' | sed -n '2,16p'
    done | tee -a "$OUT/$STAMP.md"
fi
echo "(saved in $OUT/$STAMP.md)" >&2
