#!/usr/bin/env bash
# Installs the system programs the test suite needs when they are missing (Debian: apt-get).
# jq: the casebook checker evaluates proposed jqPathExpressions with the jq program.
set -euo pipefail
missing=()
for prog in "$@"; do
  command -v "$prog" >/dev/null 2>&1 || missing+=("$prog")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "installing: ${missing[*]}" >&2
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
if ! command -v apt-get >/dev/null 2>&1; then
  echo "missing programs: ${missing[*]} (and no apt-get to install them)" >&2
  exit 1
fi
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null 2>&1 || {
  $SUDO apt-get update -q >/dev/null
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null
}
