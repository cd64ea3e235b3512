#!/usr/bin/env bash
# Interop in both directions, against the reference SDKs (issue "CLI and conformance", point 4):
#   1. peer clients -> `ferromcp serve`: the Python SDK (`mcp` 2.3.0) over stdio and HTTP in each
#      era it speaks (legacy handshake, auto probe, pinned 2026-07-28), the TypeScript SDK
#      (1.32.2, handshake era) over stdio and HTTP, the TypeScript SDK v2 (the split packages
#      @modelcontextprotocol/client and /server 2.0.0, interop/typescript-v2/package-lock.json)
#      over stdio and HTTP in each of its negotiation modes (default legacy handshake, opt-in
#      auto probe, opt-in pinned 2026-07-28) — interop/python/client.py,
#      interop/typescript/client.mjs, interop/typescript-v2/client.mjs; and the Python SDK's
#      OAuth client against
#      `ferromcp serve --http --auth` (the embedded authorization server) —
#      interop/python/oauth_client.py;
#   2. ferromcp's client -> peer servers: the Python SDK, the TS SDK v1 and v2 and rmcp 3.11
#      (interop/*/server.*, interop/rmcp-server/) in each era they speak, over stdio with the
#      library (crates/ferromcp-cli/tests/interop_peers.rs), and with the `ferromcp` CLI's
#      client commands over stdio and Streamable HTTP (interop/cli_peer.py);
#   3. the 2024-11-05 HTTP+SSE transport both ways: the Python SDK's `sse_client` and the TS SDK's
#      `SSEClientTransport` -> `ferromcp serve --http --legacy-sse`; the `ferromcp` CLI -> the
#      Python SDK's SSE server and the TS SDK's `SSEServerTransport` (through the client's
#      fallback from Streamable HTTP, and pinned to the handshake era).
#
# Installs what it needs under .ci/tools/ (gitignored; reused when the pins match), builds,
# runs every pairing with a deadline, prints one line per pairing and
# `interop: N passed, M failed`; exits 1 on any failure.
#
# Expected failures: interop/expected-failures.txt, one `PAIRING CHECK-ID CATEGORY reason` per line.
# A pairing passes iff the checks that failed are exactly the listed ones (a listed check that
# passes fails the pairing, like a stale conformance baseline).
#
# Environment:
#   INTEROP_ONLY=REGEX         run only the pairings whose name matches
#   INTEROP_CARGO_FLAGS="..."  how to build ferromcp and the interop test (default: the flags of
#                              .ci/run's test step, so nothing is rebuilt after it)
#   INTEROP_FERROMCP=PATH INTEROP_PEER_TEST=PATH
#                              use these builds of the ferromcp binary and of the interop_peers
#                              test instead of building
#   INTEROP_DEADLINE=SECONDS   per pairing (default 120)
#   INTEROP_OFFLINE=1          never install; fail if the tools are missing
#   INTEROP_TS_V2_VERSION=X    run the TS SDK v2 pairings with @modelcontextprotocol/client and
#                              /server X (exact; installed without the lockfile into
#                              .ci/tools/interop-npm-v2-X) instead of the locked 2.0.0
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
# shellcheck source=install-retry.sh
. .ci/install-retry.sh
TOOLS=$ROOT/.ci/tools
LOGS=$TOOLS/interop-logs
PY_MCP_VERSION=2.3.0
TS_SDK_VERSION=1.32.2
NODE_PACKAGE=node@22
RMCP_TARGET=$TOOLS/rmcp-target
DEADLINE=${INTEROP_DEADLINE:-120}
read -r -a CARGO_FLAGS <<<"${INTEROP_CARGO_FLAGS:---workspace --all-features}"
started=$(date +%s)

say() { printf '%s\n' "$*"; }
die() { say "interop: $*" >&2; say "interop: 0 passed, 1 failed"; exit 1; }

# --- install -------------------------------------------------------------------------------
VENV=$TOOLS/venv
NPM_DIR=$TOOLS/interop-npm
NODE=$NPM_DIR/node_modules/node/bin/node
export MCP_SDK_NODE_MODULES=$NPM_DIR/node_modules
# The TS SDK v2: its own install (zod 4, no v1 packages), from interop/typescript-v2's lockfile.
TS_V2_VERSION=${INTEROP_TS_V2_VERSION:-}
NPM_V2_DIR=$TOOLS/interop-npm-v2${TS_V2_VERSION:+-$TS_V2_VERSION}
export MCP_SDK_V2_NODE_MODULES=$NPM_V2_DIR/node_modules

install_python() {
  local stamp=$VENV/.interop-mcp-$PY_MCP_VERSION
  [[ -f $stamp ]] && return 0
  [[ ${INTEROP_OFFLINE:-} == 1 ]] && die "no Python venv with mcp==$PY_MCP_VERSION at $VENV"
  say "installing mcp==$PY_MCP_VERSION into $VENV"
  python3 -m venv "$VENV" &&
    install_retry "pip install mcp==$PY_MCP_VERSION" \
      "$VENV/bin/pip" install -q --disable-pip-version-check "mcp==$PY_MCP_VERSION" &&
    touch "$stamp"
}

install_node() {
  local stamp=$NPM_DIR/.interop-$NODE_PACKAGE-sdk-$TS_SDK_VERSION
  [[ -f $stamp && -x $NODE ]] && return 0
  [[ ${INTEROP_OFFLINE:-} == 1 ]] && die "no node/TS SDK at $NPM_DIR"
  say "installing $NODE_PACKAGE and @modelcontextprotocol/sdk@$TS_SDK_VERSION into $NPM_DIR"
  mkdir -p "$NPM_DIR" &&
    (cd "$NPM_DIR" && { [[ -f package.json ]] || npm init -y >/dev/null; } &&
      install_retry "npm install $NODE_PACKAGE @modelcontextprotocol/sdk@$TS_SDK_VERSION" \
        npm install --no-audit --no-fund --loglevel=error "$NODE_PACKAGE" \
        "@modelcontextprotocol/sdk@$TS_SDK_VERSION") &&
    touch "$stamp"
}

install_ts_v2() {
  local lock=interop/typescript-v2/package-lock.json stamp
  if [[ -n $TS_V2_VERSION ]]; then
    stamp=$NPM_V2_DIR/.interop-sdk-$TS_V2_VERSION
  else
    stamp=$NPM_V2_DIR/.interop-lock-$(sha256sum "$lock" | cut -c1-16)
  fi
  [[ -f $stamp ]] && return 0
  [[ ${INTEROP_OFFLINE:-} == 1 ]] && die "no TS SDK v2 at $NPM_V2_DIR"
  rm -rf "$NPM_V2_DIR" && mkdir -p "$NPM_V2_DIR" || return 1
  if [[ -n $TS_V2_VERSION ]]; then
    say "installing @modelcontextprotocol/client and /server $TS_V2_VERSION into $NPM_V2_DIR"
    (cd "$NPM_V2_DIR" && npm init -y >/dev/null &&
      install_retry "npm install the TS SDK v2 $TS_V2_VERSION" \
        npm install --no-audit --no-fund --loglevel=error --save-exact \
        "@modelcontextprotocol/client@$TS_V2_VERSION" "@modelcontextprotocol/server@$TS_V2_VERSION")
  else
    say "installing the TS SDK v2 from $lock into $NPM_V2_DIR (npm ci)"
    cp interop/typescript-v2/package.json "$lock" "$NPM_V2_DIR"/ &&
      (cd "$NPM_V2_DIR" && install_retry "npm ci of the TS SDK v2" \
        npm ci --no-audit --no-fund --loglevel=error)
  fi && touch "$stamp"
}

rm -rf "$LOGS"
mkdir -p "$TOOLS" "$LOGS"
install_python || die "pip install failed"
install_node || die "npm install failed"
install_ts_v2 || die "npm install of the TS SDK v2 failed"
PY=$VENV/bin/python
say "python: $("$PY" -c 'import importlib.metadata as m; print("mcp", m.version("mcp"))')"
say "node:   $("$NODE" --version), @modelcontextprotocol/sdk $("$NODE" -p "require('$MCP_SDK_NODE_MODULES/@modelcontextprotocol/sdk/package.json').version")"
say "        @modelcontextprotocol/client $("$NODE" -p "require('$MCP_SDK_V2_NODE_MODULES/@modelcontextprotocol/client/package.json').version")," \
  "/server $("$NODE" -p "require('$MCP_SDK_V2_NODE_MODULES/@modelcontextprotocol/server/package.json').version")"

# --- build ---------------------------------------------------------------------------------
# The rmcp peer (its own workspace and target dir) builds in the background while ferromcp builds
# and the peer clients run; it is needed only from the "ferromcp's client" pairings on.
# Skipped when INTEROP_ONLY selects none of the rmcp pairings (named below).
wants_rmcp=${INTEROP_ONLY:+0}
for name in ferromcp-client.rmcp-server.{handshake,modern,auto} \
  ferromcp-cli.rmcp-server.{stdio,http}.{2025-11-25,2026-07-28,auto}; do
  [[ -z ${INTEROP_ONLY:-} || $name =~ $INTEROP_ONLY ]] && wants_rmcp=1
done
if [[ ${wants_rmcp:-1} == 1 ]]; then
  say "building the rmcp peer server in the background (own workspace, target ${RMCP_TARGET#"$ROOT"/})"
  CARGO_TARGET_DIR=$RMCP_TARGET cargo build --locked --manifest-path interop/rmcp-server/Cargo.toml \
    >"$LOGS/rmcp-build.log" 2>&1 &
else
  true &
fi
rmcp_build=$!
trap 'kill "$rmcp_build" 2>/dev/null' EXIT
RMCP_SERVER=$RMCP_TARGET/debug/ferromcp-interop-rmcp-server
if [[ -n ${INTEROP_FERROMCP:-} && -n ${INTEROP_PEER_TEST:-} ]]; then
  say "using prebuilt $INTEROP_FERROMCP and $INTEROP_PEER_TEST"
  artifacts=""
else
  say "building ferromcp and the interop test (cargo test ${CARGO_FLAGS[*]} --no-run)"
  artifacts=$(cargo test "${CARGO_FLAGS[@]}" --no-run --message-format=json 2>"$LOGS/build.log") ||
    { tail -n 30 "$LOGS/build.log" >&2; die "cargo build failed"; }
fi
exe_of() { # the executable of the artifact whose target is named $1 and of kind $2 (bin, test)
  printf '%s\n' "$artifacts" | "$PY" -c '
import json, sys
name, kind = sys.argv[1:]
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    t = m.get("target") or {}
    # A bin also has a unit-test harness (profile.test); the bin itself is the one without.
    harness = (m.get("profile") or {}).get("test", False)
    if kind == "bin" and harness:
        continue
    if m.get("reason") == "compiler-artifact" and m.get("executable") and t.get("name") == name and kind in t.get("kind", []):
        print(m["executable"])
        break
' "$1" "$2"
}
FERROMCP=${INTEROP_FERROMCP:-$(exe_of ferromcp bin)}
PEER_TEST=${INTEROP_PEER_TEST:-$(exe_of interop_peers test)}
[[ -x $FERROMCP ]] || die "no ferromcp binary in the cargo output"
[[ -x $PEER_TEST ]] || die "no interop_peers test binary in the cargo output"


# --- running pairings ----------------------------------------------------------------------
EXPECTED=interop/expected-failures.txt
passed=0
failed=0
failed_names=()

expected_for() { # the expected-failing check ids of pairing $1, sorted
  [[ -f $EXPECTED ]] || return 0
  awk -v p="$1" '$0 !~ /^[[:space:]]*(#|$)/ && $1 == p { print $2 }' "$EXPECTED" | sort -u
}

# judge NAME RC LOG: compare the FAIL lines with the expectations, print the pairing's line.
judge() {
  local name=$1 rc=$2 log=$3 secs=$4 got passed_ids want unexpected stale
  got=$(sed -n 's/^FAIL \([^:]*\):.*/\1/p' "$log" | sort -u)
  passed_ids=$(sed -n 's/^ok  *\([^ ]*\).*/\1/p' "$log" | sort -u)
  want=$(expected_for "$name")
  unexpected=$(comm -23 <(printf '%s\n' "$got" | sed '/^$/d') <(printf '%s\n' "$want" | sed '/^$/d') | tr '\n' ' ')
  # Stale: listed and passed (a listed check that was skipped, e.g. its fixture is not there yet,
  # is neither).
  stale=$(comm -12 <(printf '%s\n' "$passed_ids" | sed '/^$/d') <(printf '%s\n' "$want" | sed '/^$/d') | tr '\n' ' ')
  local verdict=pass why=""
  if [[ -n $unexpected ]]; then verdict=fail why+=" unexpected failures: ${unexpected% };"; fi
  if [[ -n $stale ]]; then verdict=fail why+=" expected to fail but passed: ${stale% };"; fi
  if [[ $rc -ne 0 && -z $got ]]; then verdict=fail why+=" exit status $rc without a failed check;"; fi
  if [[ $rc -eq 0 && -n $got ]]; then verdict=fail why+=" exit status 0 despite failed checks;"; fi
  if ! grep -q '^ok \|^FAIL ' "$log"; then verdict=fail why+=" no check ran;"; fi
  if [[ $verdict == pass ]]; then
    passed=$((passed + 1))
    if [[ -n $got ]]; then
      say "PASS $name (${secs}s; expected failures: $(printf '%s' "$got" | tr '\n' ' '))"
    else
      say "PASS $name (${secs}s)"
    fi
  else
    failed=$((failed + 1))
    failed_names+=("$name")
    say "FAIL $name (${secs}s):${why%;}"
    sed 's/^/    | /' "$log"
  fi
}

# pairing NAME CMD...: run one pairing with the deadline (timeout signals its whole process group).
pairing() {
  local name=$1
  shift
  if [[ -n ${INTEROP_ONLY:-} && ! $name =~ $INTEROP_ONLY ]]; then return 0; fi
  local log=$LOGS/$name.log t0 rc
  t0=$(date +%s)
  timeout --kill-after=5 "$DEADLINE" "$@" >"$log" 2>&1
  rc=$?
  [[ $rc -eq 124 || $rc -eq 137 ]] && say "FAIL run: killed after the ${DEADLINE}s deadline" >>"$log"
  judge "$name" "$rc" "$log" "$(($(date +%s) - t0))"
}

free_port() {
  "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# http_pairing NAME CMD...: start the HTTP server "${SERVER[@]}" (every @PORT@ replaced by a
# fresh loopback port) in its own process group, wait until it listens, run CMD with the URL
# http://127.0.0.1:PORT/mcp appended (another path with URL_PATH=/...), stop the server's whole
# process group.
http_pairing() {
  local name=$1
  shift
  if [[ -n ${INTEROP_ONLY:-} && ! $name =~ $INTEROP_ONLY ]]; then return 0; fi
  local port pid url ready=0
  port=$(free_port)
  url=http://127.0.0.1:$port${URL_PATH:-/mcp}
  setsid "${SERVER[@]//@PORT@/$port}" >"$LOGS/$name.server.log" 2>&1 &
  pid=$!
  for _ in $(seq 150); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then ready=1 && break; fi
    sleep 0.1
  done
  if [[ $ready == 1 ]]; then
    pairing "$name" "$@" "$url"
  else
    printf 'FAIL run: the server did not listen on %s within 15 s: %s\n' "$port" "${SERVER[*]}" >"$LOGS/$name.log"
    cat "$LOGS/$name.server.log" >>"$LOGS/$name.log"
    judge "$name" 1 "$LOGS/$name.log" 15
  fi
  kill -TERM -- "-$pid" 2>/dev/null
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL -- "-$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
}

say ""
say "== peer clients -> ferromcp serve"
PYC=(env PYTHONWARNINGS=ignore "$PY" interop/python/client.py --deadline $((DEADLINE - 10)))
TSC=("$NODE" interop/typescript/client.mjs --deadline $((DEADLINE - 10)))
SERVER=("$FERROMCP" serve --http 127.0.0.1:@PORT@)
for mode in legacy auto 2026-07-28; do
  pairing "python-client.stdio.$mode" "${PYC[@]}" --mode "$mode" stdio "$FERROMCP" serve
  http_pairing "python-client.http.$mode" "${PYC[@]}" --mode "$mode" http
done
pairing "ts-client.stdio.2025-11-25" "${TSC[@]}" stdio "$FERROMCP" serve
http_pairing "ts-client.http.2025-11-25" "${TSC[@]}" http
# The TS SDK v2 client: its default (the legacy handshake) and both opt-in negotiation modes.
TS2C=("$NODE" interop/typescript-v2/client.mjs --deadline $((DEADLINE - 10)))
for mode in legacy auto 2026-07-28; do
  pairing "ts-v2-client.stdio.$mode" "${TS2C[@]}" --mode "$mode" stdio "$FERROMCP" serve
  http_pairing "ts-v2-client.http.$mode" "${TS2C[@]}" --mode "$mode" http
done
# `serve --http --stateless`: handshake-era POSTs without sessions (2026-07-28 is stateless anyway).
SERVER=("$FERROMCP" serve --http 127.0.0.1:@PORT@ --stateless)
http_pairing "python-client.http-stateless.legacy" "${PYC[@]}" --mode legacy http
http_pairing "ts-client.http-stateless.2025-11-25" "${TSC[@]}" http
# `serve --http --auth`: the Python SDK's OAuth client (discovery, dynamic registration, PKCE,
# token, refresh, revocation) against ferromcp's embedded authorization server.
SERVER=("$FERROMCP" serve --http 127.0.0.1:@PORT@ --auth)
PYO=(env PYTHONWARNINGS=ignore "$PY" interop/python/oauth_client.py --deadline $((DEADLINE - 10)))
for mode in legacy auto; do
  http_pairing "python-oauth-client.http-auth.$mode" "${PYO[@]}" --mode "$mode"
done

if ! wait "$rmcp_build"; then
  # Its pairings fail below; the others still run.
  say "interop: the rmcp server build failed (${LOGS#"$ROOT"/}/rmcp-build.log):"
  tail -n 30 "$LOGS/rmcp-build.log" | sed 's/^/    | /'
fi

say ""
say "== ferromcp's client -> peer servers (stdio)"
peer_pairing() { # NAME LIFECYCLE ERA COMMAND-AS-JSON
  pairing "$1" env FERROMCP_INTEROP=1 FERROMCP_INTEROP_LIFECYCLE="$2" FERROMCP_INTEROP_ERA="$3" \
    FERROMCP_INTEROP_PEER="$4" "$PEER_TEST" --nocapture --test-threads=1
}
json_cmd() { "$PY" -c 'import json, sys; print(json.dumps(sys.argv[1:]))' "$@"; }
PY_SERVER=$(json_cmd "$PY" interop/python/server.py)
TS_SERVER=$(json_cmd "$NODE" interop/typescript/server.mjs)
TS2_SERVER=$(json_cmd "$NODE" interop/typescript-v2/server.mjs)
RMCP=$(json_cmd "$RMCP_SERVER")
# The Python SDK, rmcp and the TS SDK v2 (serveStdio) serve both eras on stdio; the TS SDK v1
# the handshake era only.
for server in python rmcp ts-v2; do
  case $server in python) cmd=$PY_SERVER ;; rmcp) cmd=$RMCP ;; ts-v2) cmd=$TS2_SERVER ;; esac
  peer_pairing "ferromcp-client.$server-server.handshake" handshake handshake "$cmd"
  peer_pairing "ferromcp-client.$server-server.modern" modern modern "$cmd"
  peer_pairing "ferromcp-client.$server-server.auto" auto modern "$cmd"
done
peer_pairing "ferromcp-client.ts-server.handshake" handshake handshake "$TS_SERVER"
peer_pairing "ferromcp-client.ts-server.auto" auto handshake "$TS_SERVER"

say ""
say "== the ferromcp CLI (inspect, tools, tool, call) -> peer servers (stdio and HTTP)"
CLI=("$PY" interop/cli_peer.py "$FERROMCP")
shell_cmd() { "$PY" -c 'import shlex, sys; print(shlex.join(sys.argv[1:]))' "$@"; }
PY_STDIO=$(shell_cmd "$PY" interop/python/server.py)
TS_STDIO=$(shell_cmd "$NODE" interop/typescript/server.mjs)
TS2_STDIO=$(shell_cmd "$NODE" interop/typescript-v2/server.mjs)
RMCP_STDIO=$(shell_cmd "$RMCP_SERVER")
for p in "python $PY_STDIO" "rmcp $RMCP_STDIO" "ts-v2 $TS2_STDIO"; do
  server=${p%% *} target=${p#* }
  pairing "ferromcp-cli.$server-server.stdio.2025-11-25" "${CLI[@]}" 2025-11-25 handshake "$target"
  pairing "ferromcp-cli.$server-server.stdio.2026-07-28" "${CLI[@]}" 2026-07-28 modern "$target"
  pairing "ferromcp-cli.$server-server.stdio.auto" "${CLI[@]}" auto modern "$target"
done
pairing "ferromcp-cli.ts-server.stdio.2025-11-25" "${CLI[@]}" 2025-11-25 handshake "$TS_STDIO"
pairing "ferromcp-cli.ts-server.stdio.auto" "${CLI[@]}" auto handshake "$TS_STDIO"
SERVER=("$PY" interop/python/server.py --http @PORT@)
http_pairing "ferromcp-cli.python-server.http.2025-11-25" "${CLI[@]}" 2025-11-25 handshake
http_pairing "ferromcp-cli.python-server.http.2026-07-28" "${CLI[@]}" 2026-07-28 modern
http_pairing "ferromcp-cli.python-server.http.auto" "${CLI[@]}" auto modern
SERVER=("$RMCP_SERVER" --http @PORT@)
http_pairing "ferromcp-cli.rmcp-server.http.2025-11-25" "${CLI[@]}" 2025-11-25 handshake
http_pairing "ferromcp-cli.rmcp-server.http.2026-07-28" "${CLI[@]}" 2026-07-28 modern
http_pairing "ferromcp-cli.rmcp-server.http.auto" "${CLI[@]}" auto modern
SERVER=("$NODE" interop/typescript/server.mjs --http @PORT@)
http_pairing "ferromcp-cli.ts-server.http.2025-11-25" "${CLI[@]}" 2025-11-25 handshake
http_pairing "ferromcp-cli.ts-server.http.auto" "${CLI[@]}" auto handshake
# createMcpHandler: 2026-07-28 per request, 2025-era requests through its stateless fallback.
SERVER=("$NODE" interop/typescript-v2/server.mjs --http @PORT@)
http_pairing "ferromcp-cli.ts-v2-server.http.2025-11-25" "${CLI[@]}" 2025-11-25 handshake
http_pairing "ferromcp-cli.ts-v2-server.http.2026-07-28" "${CLI[@]}" 2026-07-28 modern
http_pairing "ferromcp-cli.ts-v2-server.http.auto" "${CLI[@]}" auto modern

say ""
say "== through ferromcp gateway: peer servers behind it, peer clients in front of it"
GW=("$PY" interop/gateway_front.py "$FERROMCP")
pairing "gateway.ferromcp-client.python-server.stdio" "${GW[@]}" ferromcp py "$PY_STDIO"
pairing "gateway.ferromcp-client.ts-server.stdio" "${GW[@]}" ferromcp ts "$TS_STDIO"
pairing "gateway.ferromcp-client.ts-v2-server.stdio" "${GW[@]}" ferromcp tsv2 "$TS2_STDIO"
SERVER=("$PY" interop/python/server.py --http @PORT@)
http_pairing "gateway.ferromcp-client.python-server.http" "${GW[@]}" ferromcp py
SERVER=("$NODE" interop/typescript/server.mjs --http @PORT@)
http_pairing "gateway.ferromcp-client.ts-server.http" "${GW[@]}" ferromcp ts
for mode in legacy auto; do
  pairing "gateway.python-client.stdio.$mode" "${GW[@]}" python "$mode"
done
pairing "gateway.ts-client.stdio" "${GW[@]}" ts "$NODE"

say ""
say "== the 2024-11-05 HTTP+SSE transport, both ways"
SERVER=("$FERROMCP" serve --http 127.0.0.1:@PORT@ --legacy-sse)
URL_PATH=/sse http_pairing "python-client.sse.legacy" "${PYC[@]}" --mode legacy sse
URL_PATH=/sse http_pairing "ts-client.sse.2025-11-25" "${TSC[@]}" sse
SERVER=("$PY" interop/python/server.py --sse @PORT@)
URL_PATH=/sse http_pairing "ferromcp-cli.python-server.sse.auto" "${CLI[@]}" auto handshake
URL_PATH=/sse http_pairing "ferromcp-cli.python-server.sse.2025-11-25" "${CLI[@]}" 2025-11-25 handshake
SERVER=("$NODE" interop/typescript/server.mjs --sse @PORT@)
URL_PATH=/sse http_pairing "ferromcp-cli.ts-server.sse.auto" "${CLI[@]}" auto handshake
URL_PATH=/sse http_pairing "ferromcp-cli.ts-server.sse.2025-11-25" "${CLI[@]}" 2025-11-25 handshake

say ""
if [[ -f $EXPECTED && -z ${INTEROP_ONLY:-} ]]; then
  # An expected failure naming a pairing that no longer exists is stale too.
  while read -r p; do
    [[ -f $LOGS/$p.log ]] || { say "FAIL $p: listed in $EXPECTED but not run"; failed=$((failed + 1)); }
  done < <(awk '$0 !~ /^[[:space:]]*(#|$)/ { print $1 }' "$EXPECTED" | sort -u)
fi
say "interop took $(($(date +%s) - started)) s (logs in ${LOGS#"$ROOT"/})"
say "interop: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
