#!/usr/bin/env bash
# Installs the system programs and files the test suite needs when they are missing (Debian: apt-get).
# Each argument is NAME or NAME=PACKAGE: NAME is a program looked up on PATH, or an absolute path that must exist;
# PACKAGE (default: NAME) is the Debian package that provides it.
#   jq                   the casebook checker evaluates proposed jqPathExpressions with the jq program
#   redis-server         the tests start their own Redis on a free port
#   chromium             tests/report/test_browser.py drives Debian's chromium with Playwright (never `playwright install`)
#   go=golang-go         scripts/build-go-tools.sh builds the Go test tooling of tests/tools/ with it
set -euo pipefail
missing=()
for arg in "$@"; do
  name=${arg%%=*}
  package=${arg#*=}
  if [[ $name == /* ]]; then
    [ -e "$name" ] || missing+=("$package")
  else
    command -v "$name" >/dev/null 2>&1 || missing+=("$package")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "installing: ${missing[*]}" >&2
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
if ! command -v apt-get >/dev/null 2>&1; then
  echo "missing packages: ${missing[*]} (and no apt-get to install them)" >&2
  exit 1
fi
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null 2>&1 || {
  $SUDO apt-get update -q >/dev/null
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
}
