#!/usr/bin/env bash
# Browser tests: headless Chromium drives the web inspector (`ferromcp inspect --web`) and its
# MCP Apps host. Runs every browser/*.test.mjs with node (node:test; each test has a timeout
# and kills what it starts), with FERROMCP_BIN (the built `ferromcp`) and CHROMIUM (the
# browser) in the environment. The npm packages come from browser/package-lock.json (`npm ci`,
# into browser/node_modules, gitignored); Chromium from the distribution (never downloaded
# by playwright).
#
# Environment:
#   FERROMCP_BIN=PATH   use this `ferromcp` instead of building it (the flags of .ci/run's
#                       test step, so nothing is rebuilt after it)
#   CHROMIUM=PATH       the browser (default: `command -v chromium`, installed with apt-get
#                       when missing)
#   SCREENSHOTS=1       write the screenshots under docs/screenshots/
# Exit status: non-zero when any test file fails.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=install-retry.sh
. .ci/install-retry.sh

if [[ -z "${CHROMIUM:-}" ]]; then
  if ! command -v chromium >/dev/null 2>&1; then
    echo "browser: installing chromium (apt-get)"
    SUDO=""
    [[ $(id -u) -eq 0 ]] || SUDO="sudo"
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq chromium
  fi
  CHROMIUM=$(command -v chromium)
fi
export CHROMIUM

if [[ -z "${FERROMCP_BIN:-}" ]]; then
  cargo build --workspace --all-features --bin ferromcp
  FERROMCP_BIN="$(pwd)/${CARGO_TARGET_DIR:-target}/debug/ferromcp"
fi
export FERROMCP_BIN

(cd browser && install_retry "npm ci in browser/" npm ci --no-audit --no-fund --loglevel=error) ||
  exit 1

failed=0
for t in browser/*.test.mjs; do
  echo "browser: $t"
  if ! timeout 600 node --test-reporter=spec "$t"; then
    echo "browser: $t FAILED" >&2
    failed=1
  fi
done
exit "$failed"
