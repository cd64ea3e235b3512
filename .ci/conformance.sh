#!/usr/bin/env bash
# Runs the official MCP conformance harnesses, server side, against the demo server
# (`ferromcp serve --http`), and compares the results with the expected-failures files in
# .ci/conformance/ (see .ci/conformance/README.md). Three legs, one server for all:
#
#   @modelcontextprotocol/conformance 0.1.16           --suite all (incl. pending)
#   @modelcontextprotocol/conformance 0.2.0-alpha.12   --suite all --spec-version 2025-11-25
#   @modelcontextprotocol/conformance 0.2.0-alpha.12   --suite all --spec-version 2026-07-28
#
# A failure that is not listed fails the step, and so does a listed scenario or check that
# passes (a stale entry): the lists only shrink. Node 22 and the harnesses are installed
# from the npm registry under .ci/tools/ (gitignored) on first use; later runs reuse them.
#
# Needs npm (any version) and cargo. Environment knobs:
#   CONFORMANCE_ALPHA   the 0.2 harness version (default 0.2.0-alpha.12)
#   CONFORMANCE_LEGS    which legs to run (default "0.1.16 2025-11-25 2026-07-28")
#   CONFORMANCE_OUT     the results directory (default target/conformance)
#   FERROMCP_BIN        a prebuilt ferromcp binary (skips the cargo build)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

harness_v1=0.1.16
harness_v2=${CONFORMANCE_ALPHA:-0.2.0-alpha.12}
legs=${CONFORMANCE_LEGS:-"0.1.16 2025-11-25 2026-07-28"}
tools=$root/.ci/tools
baselines=$root/.ci/conformance
out=${CONFORMANCE_OUT:-$root/target/conformance}
node=$tools/node_modules/node/bin/node
leg_timeout=600

say() { printf '[conformance] %s\n' "$*"; }
die() { printf '[conformance] error: %s\n' "$*" >&2; exit 1; }

# The version of an installed npm package, or nothing.
installed_version() {
  local manifest=$1/node_modules/$2/package.json
  [[ -f $manifest ]] || return 0
  sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' "$manifest" | head -n 1
}

# Installs package $2 at exact version $3 into $1 unless that version is already there.
# npm's cache (--prefer-offline) makes a reinstall cheap too.
npm_install() {
  local dir=$1 package=$2 version=$3
  if [[ $(installed_version "$dir" "$package") == "$version" ]]; then
    return 0
  fi
  say "installing $package@$version into ${dir#"$root"/}"
  mkdir -p "$dir"
  npm install --prefix "$dir" --save-exact --prefer-offline --no-audit --no-fund \
    --loglevel=error "$package@$version" >/dev/null
}

install_tools() {
  command -v npm >/dev/null || die "npm is needed to install node 22 and the harnesses"
  if ! [[ -x $node && $("$node" --version) == v22.* ]]; then
    say "installing node 22 into .ci/tools"
    mkdir -p "$tools"
    npm install --prefix "$tools" --prefer-offline --no-audit --no-fund --loglevel=error \
      node@22 >/dev/null
  fi
  "$node" --version | grep -q '^v22\.' || die "node 22 did not install"
  npm_install "$tools/c016" @modelcontextprotocol/conformance "$harness_v1"
  npm_install "$tools/c020" @modelcontextprotocol/conformance "$harness_v2"
}

build_server() {
  if [[ -n ${FERROMCP_BIN:-} ]]; then
    server_bin=$FERROMCP_BIN
  else
    cargo build --quiet -p ferromcp-cli
    server_bin=${CARGO_TARGET_DIR:-$root/target}/debug/ferromcp
  fi
  [[ -x $server_bin ]] || die "no ferromcp binary at $server_bin"
}

server_pid=
stop_server() {
  if [[ -n $server_pid ]]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=
  fi
}
trap stop_server EXIT

# Starts the demo server on a free loopback port (the OS picks it: port 0) and sets `url`.
# The URL says `localhost`: the DNS-rebinding scenario derives its "good" Host from it.
start_server() {
  local log=$out/server.log port=
  : >"$log"
  "$server_bin" serve --http 127.0.0.1:0 2>"$log" &
  server_pid=$!
  for _ in $(seq 100); do
    port=$(sed -n 's|.*serving the demo server at http://127\.0\.0\.1:\([0-9]*\)/mcp.*|\1|p' "$log")
    [[ -n $port ]] && break
    kill -0 "$server_pid" 2>/dev/null || { cat "$log" >&2; die "the server exited"; }
    sleep 0.1
  done
  [[ -n $port ]] || { cat "$log" >&2; die "the server did not start within 10 s"; }
  # Wait until it accepts connections.
  for _ in $(seq 50); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      url=http://localhost:$port/mcp
      say "server up at $url (pid $server_pid)"
      return 0
    fi
    sleep 0.1
  done
  die "the server does not accept connections on port $port"
}

# Prints, from a leg's checks.json files, one line per scenario with a failing or warning
# check: the ids to put into an expected-failures file.
print_failing_checks() {
  "$node" - "$1" <<'EOF'
const fs = require("fs"), path = require("path");
const dir = process.argv[2];
for (const run of fs.readdirSync(dir).sort()) {
  const file = path.join(dir, run, "checks.json");
  if (!fs.existsSync(file)) continue;
  const scenario = run.replace(/^server-/, "").replace(/-\d{4}-\d\d-\d\dT.*$/, "");
  const bad = JSON.parse(fs.readFileSync(file, "utf8"))
    .filter((c) => c.status === "FAILURE" || c.status === "WARNING")
    .map((c) => `${c.id} (${c.status.toLowerCase()})`);
  if (bad.length) console.log(`  ${scenario}: ${[...new Set(bad)].join(", ")}`);
}
EOF
}

# Runs one leg: $1 = name, $2 = harness dir, $3 = expected-failures file, rest = selection.
run_leg() {
  local name=$1 dir=$2 baseline=$3
  shift 3
  local harness=$dir/node_modules/@modelcontextprotocol/conformance/dist/index.js
  local results=$out/$name log=$out/$name.log status=0
  [[ -f $baseline ]] || die "missing expected-failures file ${baseline#"$root"/}"
  say "leg $name: conformance $("$node" "$harness" --version) server $*"
  timeout "$leg_timeout" "$node" "$harness" server --url "$url" "$@" \
    --expected-failures "$baseline" -o "$results" >"$log" 2>&1 || status=$?
  # The harness's summary and its verdict on the baseline (everything after the runs),
  # without its colour codes.
  sed -n '/=== SUMMARY ===/,$p' "$log" | sed 's/\x1b\[[0-9;]*m//g'
  if ((status == 0)); then
    say "leg $name: ok"
  else
    say "leg $name: FAILED (exit $status; full output in ${log#"$root"/})"
    say "failing or warning checks in this leg:"
    print_failing_checks "$results" || true
    failed_legs+=("$name")
  fi
}

install_tools
build_server
rm -rf "$out"
mkdir -p "$out"
start_server

failed_legs=()
started=$SECONDS
for leg in $legs; do
  case $leg in
    0.1.16)
      run_leg 0.1.16 "$tools/c016" "$baselines/expected-failures-0.1.16-server.yml" \
        --suite all ;;
    2025-11-25 | 2026-07-28)
      run_leg "0.2-$leg" "$tools/c020" "$baselines/expected-failures-0.2-server-$leg.yml" \
        --suite all --spec-version "$leg" ;;
    *) die "unknown leg $leg" ;;
  esac
done
stop_server
say "harness legs took $((SECONDS - started)) s"

if ((${#failed_legs[@]})); then
  die "failed legs: ${failed_legs[*]} (see .ci/conformance/README.md to update a baseline)"
fi
say "all legs match their expected failures"
