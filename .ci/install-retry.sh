# Sourced by the .ci scripts that install packages from a registry (npm, PyPI).
#
# install_retry DESCRIPTION COMMAND [ARGS...]
#   Runs COMMAND with its output kept in a temporary file, up to CI_INSTALL_ATTEMPTS times
#   (default 3), waiting 10 s and then 30 s between tries: a registry's passing refusal or reset
#   should not fail a whole CI run. Each failed try prints the tail of what the command said and,
#   for npm, the tail of npm's newest debug log (npm at --loglevel=error can fail printing only
#   "A complete log of this run can be found in ..."), so a failure that stays says why.
#   Returns the last try's exit status.
install_retry() {
  local what=$1 attempts=${CI_INSTALL_ATTEMPTS:-3} try=1 status out delay npm_log
  shift
  out=$(mktemp)
  while :; do
    # An `if` keeps a failing try from ending a caller that runs under `set -e`.
    if "$@" >"$out" 2>&1; then
      rm -f "$out"
      return 0
    else
      status=$?
    fi
    printf 'install: %s failed (try %d of %d, exit %d); its last lines:\n' \
      "$what" "$try" "$attempts" "$status" >&2
    tail -n 30 "$out" | sed 's/^/  | /' >&2 || true
    npm_log=$(ls -t "${npm_config_cache:-$HOME/.npm}"/_logs/*-debug-*.log 2>/dev/null | head -n 1) ||
      true
    if [[ $1 == npm && -n $npm_log ]]; then
      printf 'install: the end of %s:\n' "$npm_log" >&2
      { grep -E ' (error|warn|http fetch)' "$npm_log" | tail -n 20 | sed 's/^/  | /' >&2; } || true
    fi
    if ((try >= attempts)); then
      rm -f "$out"
      return "$status"
    fi
    delay=$((try == 1 ? 10 : 30))
    printf 'install: trying %s again in %d s\n' "$what" "$delay" >&2
    sleep "$delay"
    try=$((try + 1))
  done
}
