#!/usr/bin/env bash
# Runs the official MCP conformance harnesses against ferromcp and compares the results with
# the expected-failures files in .ci/conformance/ (see .ci/conformance/README.md).
#
# Server legs, against the demo server (`ferromcp serve --http`), one server for all:
#
#   0.1.16             conformance 0.1.16           server --suite all (incl. pending)
#   2025-11-25         conformance 0.2.0-alpha.12   server --suite all --spec-version 2025-11-25
#   2026-07-28         conformance 0.2.0-alpha.12   server --suite all --spec-version 2026-07-28,
#                                                   then every [extension] server scenario of
#                                                   `list --server` (tasks-*, sep-2640-skills-*;
#                                                   `--suite` leaves them out), one at a time
#                                                   with --spec-version 2026-07-28 --force,
#                                                   against the same baseline
#
# Client legs, the harness's mock servers against `conformance-client`
# (crates/ferromcp-conformance), ONE SCENARIO AT A TIME (the harness's --suite runs them in
# parallel, which makes its timing checks flaky on a small machine):
#
#   client-0.1.16      conformance 0.1.16           every scenario of `list --client`
#   client-2025-11-25  conformance 0.2.0-alpha.12   every client scenario of `list
#   client-2026-07-28                               --requirements REV` (required and not
#                                                   scored), each --spec-version REV --force
#
# A failure that is not listed fails the step, and so does a listed scenario or check that
# passes (a stale entry): the lists only shrink. Node 22 and the harnesses are installed
# from the npm registry under .ci/tools/ (gitignored) on first use; later runs reuse them.
#
# Needs npm (any version) and cargo. Environment knobs:
#   CONFORMANCE_ALPHA   the 0.2 harness version (default 0.2.0-alpha.12)
#   CONFORMANCE_LEGS    which legs to run (default all six: "0.1.16 2025-11-25 2026-07-28
#                       client-0.1.16 client-2025-11-25 client-2026-07-28")
#   CONFORMANCE_SCENARIOS  client legs: only these scenarios (default: all of the leg's)
#   CONFORMANCE_OUT     the results directory (default target/conformance)
#   FERROMCP_BIN        a prebuilt ferromcp binary (skips its cargo build)
#   CONFORMANCE_CLIENT_BIN  a prebuilt conformance-client binary (skips its cargo build)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
# shellcheck source=install-retry.sh
. .ci/install-retry.sh

harness_v1=0.1.16
harness_v2=${CONFORMANCE_ALPHA:-0.2.0-alpha.12}
legs=${CONFORMANCE_LEGS:-"0.1.16 2025-11-25 2026-07-28 client-0.1.16 client-2025-11-25 client-2026-07-28"}
tools=$root/.ci/tools
baselines=$root/.ci/conformance
out=${CONFORMANCE_OUT:-$root/target/conformance}
node=$tools/node_modules/node/bin/node
leg_timeout=600
# The harness kills a client after 30 s (its --timeout default); this bounds the harness.
scenario_timeout=90

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
  install_retry "npm install $package@$version" \
    npm install --prefix "$dir" --save-exact --prefer-offline --no-audit --no-fund \
    --loglevel=error "$package@$version"
}

install_tools() {
  command -v npm >/dev/null || die "npm is needed to install node 22 and the harnesses"
  if ! [[ -x $node && $("$node" --version) == v22.* ]]; then
    say "installing node 22 into .ci/tools"
    mkdir -p "$tools"
    install_retry "npm install node@22" \
      npm install --prefix "$tools" --prefer-offline --no-audit --no-fund --loglevel=error \
      node@22
  fi
  "$node" --version | grep -q '^v22\.' || die "node 22 did not install"
  npm_install "$tools/c016" @modelcontextprotocol/conformance "$harness_v1"
  npm_install "$tools/c020" @modelcontextprotocol/conformance "$harness_v2"
}

# Builds, in one cargo invocation, what the selected legs need: the demo server for the
# server legs, conformance-client for the client legs.
build_binaries() {
  local packages=() target=${CARGO_TARGET_DIR:-$root/target}/debug leg
  server_bin=${FERROMCP_BIN:-$target/ferromcp}
  client_bin=${CONFORMANCE_CLIENT_BIN:-$target/conformance-client}
  need_server= need_client=
  for leg in $legs; do
    case $leg in
      client-*) need_client=1 ;;
      *) need_server=1 ;;
    esac
  done
  [[ -n $need_server && -z ${FERROMCP_BIN:-} ]] && packages+=(-p ferromcp-cli)
  [[ -n $need_client && -z ${CONFORMANCE_CLIENT_BIN:-} ]] && packages+=(-p ferromcp-conformance)
  if ((${#packages[@]})); then
    cargo build --quiet "${packages[@]}"
  fi
  if [[ -n $need_server && ! -x $server_bin ]]; then
    die "no ferromcp binary at $server_bin"
  fi
  if [[ -n $need_client && ! -x $client_bin ]]; then
    die "no conformance-client binary at $client_bin"
  fi
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

# Runs one server leg: $1 = name, $2 = harness dir, $3 = expected-failures file, rest =
# selection.
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

# The extension server scenarios of a harness (`[extension]` in `list --server`: the
# io.modelcontextprotocol/tasks and SEP-2640 skills scenarios), one per line: $1 = harness dir.
extension_server_scenarios() {
  local harness=$1/node_modules/@modelcontextprotocol/conformance/dist/index.js
  "$node" "$harness" list --server | sed -n 's/^  - \([^ ]*\) \[extension\]$/\1/p'
}

# The client scenarios of a harness, one per line: $1 = harness dir, $2 = revision (0.2:
# `list --requirements REV`, its required and not-scored client scenarios, plus the
# extension scenarios outside the set, i.e. SEP-2640 skills) or nothing (0.1.16:
# `list --client`, all of them).
client_scenarios() {
  local harness=$1/node_modules/@modelcontextprotocol/conformance/dist/index.js
  if [[ -z $2 ]]; then
    "$node" "$harness" list --client | sed -n 's/^  - \([^ ]*\).*/\1/p'
  else
    {
      "$node" "$harness" list --client --requirements "$2" | awk '
        /^Client scenarios/ { client = 1; next }
        /^[^ ]/ { client = 0 }
        client && /^  - / { print $2 }
        /^    - .*\[client\]$/ { print $2 }'
      "$node" "$harness" list --client | sed -n 's/^  - \([^ ]*\) \[extension\]$/\1/p'
    } | awk '!seen[$0]++'
  fi
}

# Prints the failing and warning check ids found in a client scenario's results directory.
print_client_checks() {
  "$node" - "$1" <<'EOF'
const fs = require("fs"), path = require("path");
const walk = (d) => fs.readdirSync(d, { withFileTypes: true }).flatMap((e) =>
  e.isDirectory() ? walk(path.join(d, e.name)) : e.name === "checks.json" ? [path.join(d, e.name)] : []);
for (const file of walk(process.argv[2])) {
  const bad = JSON.parse(fs.readFileSync(file, "utf8"))
    .filter((c) => c.status === "FAILURE" || c.status === "WARNING")
    .map((c) => `${c.id} (${c.status.toLowerCase()})`);
  if (bad.length) console.log(`      ${[...new Set(bad)].join(", ")}`);
}
EOF
}

# Runs one client leg, one scenario at a time: $1 = name, $2 = harness dir, $3 =
# expected-failures file, $4 = revision (empty for 0.1.16). Every run gets the baseline, so
# the harness itself rejects an unlisted failure and a stale entry.
run_client_leg() {
  local name=$1 dir=$2 baseline=$3 rev=$4
  local harness=$dir/node_modules/@modelcontextprotocol/conformance/dist/index.js
  local results=$out/$name scenarios scenario run status log tally
  local passed=0 expected=0 bad=0 leg_started=$SECONDS selection=()
  [[ -f $baseline ]] || die "missing expected-failures file ${baseline#"$root"/}"
  [[ -n $rev ]] && selection=(--spec-version "$rev" --force)
  scenarios=${CONFORMANCE_SCENARIOS:-$(client_scenarios "$dir" "$rev")}
  [[ -n $scenarios ]] || die "leg $name: the harness lists no client scenarios"
  say "leg $name: conformance $("$node" "$harness" --version) client ${selection[*]}," \
    "$(wc -w <<<"$scenarios") scenarios, one at a time"
  mkdir -p "$results"
  for scenario in $scenarios; do
    run=$results/${scenario//\//_}
    log=$run.log
    status=0
    timeout "$scenario_timeout" "$node" "$harness" client --command "$client_bin" \
      --scenario "$scenario" "${selection[@]}" --expected-failures "$baseline" \
      -o "$run" >"$log" 2>&1 || status=$?
    tally=$(sed 's/\x1b\[[0-9;]*m//g' "$log" | sed -n 's/^Passed: //p' | tail -n 1)
    if ((status != 0)); then
      bad=$((bad + 1))
      if grep -q 'Stale baseline' "$log"; then
        printf '  ✗ %-44s %s: STALE entry (passes, remove it)\n' "$scenario" "$tally"
      else
        printf '  ✗ %-44s %s: UNEXPECTED failure (exit %s, see %s)\n' "$scenario" \
          "${tally:-no result}" "$status" "${log#"$root"/}"
        [[ -d $run ]] && { print_client_checks "$run" || true; }
      fi
    elif grep -q 'OVERALL: PASSED' "$log"; then
      passed=$((passed + 1))
      printf '  ✓ %-44s %s\n' "$scenario" "$tally"
    else
      expected=$((expected + 1))
      printf '  ~ %-44s %s: expected failure\n' "$scenario" "${tally:-no result}"
    fi
  done
  say "leg $name: $passed passed, $expected failed as listed, $bad unexpected" \
    "($((SECONDS - leg_started)) s)"
  ((bad == 0)) || failed_legs+=("$name")
}

install_tools
build_binaries
rm -rf "$out"
mkdir -p "$out"
[[ -n $need_server ]] && start_server

failed_legs=()
started=$SECONDS
for leg in $legs; do
  case $leg in
    0.1.16)
      run_leg 0.1.16 "$tools/c016" "$baselines/expected-failures-0.1.16-server.yml" \
        --suite all ;;
    2025-11-25 | 2026-07-28)
      run_leg "0.2-$leg" "$tools/c020" "$baselines/expected-failures-0.2-server-$leg.yml" \
        --suite all --spec-version "$leg"
      if [[ $leg == 2026-07-28 ]]; then
        extensions=$(extension_server_scenarios "$tools/c020")
        [[ -n $extensions ]] || die "the harness lists no extension server scenarios"
        for scenario in $extensions; do
          run_leg "0.2-$leg-$scenario" "$tools/c020" \
            "$baselines/expected-failures-0.2-server-$leg.yml" \
            --scenario "$scenario" --spec-version "$leg" --force
        done
      fi ;;
    client-0.1.16)
      stop_server
      run_client_leg client-0.1.16 "$tools/c016" \
        "$baselines/expected-failures-0.1.16-client.yml" "" ;;
    client-2025-11-25 | client-2026-07-28)
      stop_server
      run_client_leg "client-0.2-${leg#client-}" "$tools/c020" \
        "$baselines/expected-failures-0.2-client-${leg#client-}.yml" "${leg#client-}" ;;
    *) die "unknown leg $leg" ;;
  esac
done
stop_server
say "harness legs took $((SECONDS - started)) s"

if ((${#failed_legs[@]})); then
  die "failed legs: ${failed_legs[*]} (see .ci/conformance/README.md to update a baseline)"
fi
say "all legs match their expected failures"
