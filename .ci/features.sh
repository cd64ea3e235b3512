#!/usr/bin/env bash
# Every feature of every workspace crate builds on its own (the issue "Features that compose"):
# for each crate with a `[features]` table, `cargo check` of its lib and bins with no default
# features, then with each feature alone (`default` is left out: the default build is checked by
# clippy in .ci/run). A plain loop rather than `cargo hack check --each-feature`: installing
# cargo-hack is a long compile on CI. A warning counts as a failure (the builds would otherwise
# need RUSTFLAGS=-D warnings, which invalidates the cache the other steps share). Every check runs;
# the script fails at the end if any failed, and names them.
set -uo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
export CARGO_PROFILE_DEV_DEBUG="${CARGO_PROFILE_DEV_DEBUG:-line-tables-only}"

# Crates whose lib cannot exist without one of their features: their `--no-default-features`
# base case is skipped (each feature alone is still checked). Format: one crate name a line.
# None at present.
NO_BASE_CASE=""

# python3 reads cargo metadata (as in .ci/interop.sh); installed like redis-server in .ci/run
# when missing (the rust images on Debian have it).
if ! command -v python3 >/dev/null && command -v apt-get >/dev/null; then
  apt-get update -qq && apt-get install -y -qq python3 >/dev/null
fi
if ! command -v python3 >/dev/null; then
  echo "features.sh needs python3 (to read cargo metadata)" >&2
  exit 1
fi

# One line per crate with features: name, target flags (--lib and/or --bins), then its features.
plan="$(cargo metadata --no-deps --format-version 1 | python3 -c '
import json, sys
meta = json.load(sys.stdin)
members = set(meta["workspace_members"])
for pkg in sorted(meta["packages"], key=lambda p: p["name"]):
    if pkg["id"] not in members or not pkg["features"]:
        continue
    kinds = {k for t in pkg["targets"] for k in t["kind"]}
    flags = []
    if kinds & {"lib", "rlib", "proc-macro"}:
        flags.append("--lib")
    if "bin" in kinds:
        flags.append("--bins")
    feats = sorted(f for f in pkg["features"] if f != "default")
    print(pkg["name"], ",".join(flags), *feats)
')" || { echo "cargo metadata failed" >&2; exit 1; }

failures=()
checks=0
start=$SECONDS
log="$(mktemp)"
trap 'rm -f "$log"' EXIT

check() { # check <crate> <target flags, comma-separated> [feature]
  local crate=$1 flags=$2 feature=${3:-} label args t0 status
  args=(-p "$crate" --no-default-features ${flags//,/ })
  label="$crate --no-default-features"
  if [ -n "$feature" ]; then
    args+=(--features "$feature")
    label="$label --features $feature"
  fi
  checks=$((checks + 1))
  t0=$SECONDS
  if cargo check "${args[@]}" >"$log" 2>&1; then
    if grep -q '^warning' "$log"; then
      status="WARN"
    else
      status="ok"
    fi
  else
    status="FAIL"
  fi
  printf '%-4s %3ss  cargo check %s\n' "$status" $((SECONDS - t0)) "${args[*]}"
  if [ "$status" != ok ]; then
    grep -E -A 15 '^(warning|error)' "$log" | head -n 80 | sed 's/^/    /'
    failures+=("$label ($status)")
  fi
}

while read -r crate flags features; do
  [ -n "$crate" ] || continue
  if printf '%s\n' "$NO_BASE_CASE" | grep -qx "$crate"; then
    echo "skip      cargo check -p $crate --no-default-features (its lib needs a feature)"
  else
    check "$crate" "$flags"
  fi
  for feature in $features; do
    check "$crate" "$flags" "$feature"
  done
done <<<"$plan"

echo "$checks checks in $((SECONDS - start)) s, ${#failures[@]} failed"
if [ ${#failures[@]} -gt 0 ]; then
  printf '  failed: %s\n' "${failures[@]}" >&2
  exit 1
fi
