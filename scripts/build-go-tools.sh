#!/usr/bin/env bash
# Builds the Go test tooling of tests/tools/ (its own go.mod/go.sum, every version pinned) once per machine:
#   kube-apiserver  k8s.io/kubernetes/cmd/kube-apiserver   the real API server of the live tests
#   etcd            go.etcd.io/etcd/server/v3              its storage
#   kubectl         k8s.io/kubernetes/cmd/kubectl          the client of the README's recipes (tests/live/test_readme_recipe.py)
#   argodiff        tests/tools/argodiff                   Argo CD's own diff and ignoreDifferences normalizer
#   notify          tests/tools/notify                     Argo CD's notifications engine (render and send)
#   argodiff-argocd-3.1  the same argodiff source built in the module tests/tools/argocd-3.1 (argo-cd v3.1.9, its
#                   gitops-engine and k8s.io v0.33.1): the older release line the verdicts are also tested against
# into ${ARGO_WHY_GO_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/argo-why/go-tools}/<key>/, where <key> names the
# pinned versions and hashes go.mod, go.sum, BUILD_FLAGS below, the helper's sources and the Go version (not this
# file: editing a comment here must not rebuild anything). A folder that is already there is reused as is; a changed
# pin or source gives a new key. Concurrent callers (several work trees, pytest and make) wait on one lock, so the
# tools are built once.
#
# Prints the folder of the binaries on stdout (the only line it prints there); progress and errors go to stderr.
# A failing step exits non-zero with the step's name and the Go error.
#
# `scripts/build-go-tools.sh argocd` builds, instead, Argo CD itself for the suite's real Argo CD: the multi-call
# binary of github.com/argoproj/argo-cd/v3/cmd (API server, repo server, application controller, notifications
# controller, CLI) from the module tests/tools/argocd/ (its own go.mod/go.sum: nothing of tests/tools/go.mod moves),
# into $CACHE/argocd-<version>.<go>.<hash>/ with `argocd` and `crds/` (Argo CD's CRDs of that release). See
# build_argocd below for the patched copy of the module it builds. Same lock, same Go, same way of failing.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TOOLS="$ROOT/tests/tools"
CACHE=${ARGO_WHY_GO_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/argo-why/go-tools}
# Part of the cache key: change it when a change to how this script builds changes the binaries.
BUILD_FLAGS="CGO_ENABLED=0 -trimpath -ldflags=-s -w, version stamped"
# The oldest Go that builds the module (go.mod's go line); an older go fetches it from the Go module proxy.
GO_MIN=1.25.5

fail() {
  echo "build-go-tools: FAILED at step: $1" >&2
  [ -n "${2:-}" ] && [ -s "$2" ] && { echo "----- output of the step -----" >&2; tail -n 60 "$2" >&2; }
  exit 1
}
say() { echo "build-go-tools: $*" >&2; }

# Step 1: a Go new enough. The machine's go (1.21+ switches toolchains itself when GOTOOLCHAIN allows it); with an
# older one (Debian's golang-go 1.19), fetch the go$GO_MIN toolchain as the Go module it is published as.
"$ROOT/scripts/ensure-tools.sh" go=golang-go || fail "install Go (apt-get install golang-go)"
GO=$(command -v go)
go_version=$("$GO" env GOVERSION 2>/dev/null || "$GO" version | awk '{print $3}')
older() { [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | head -n1)" != "$2" ]; }  # is $1 older than $2?
if older "${go_version#go}" "1.21"; then
  say "$go_version is too old for this module; fetching go$GO_MIN from the Go module proxy"
  log=$(mktemp)
  tc_mod="golang.org/toolchain@v0.0.1-go$GO_MIN.$("$GO" env GOOS).$("$GO" env GOARCH)"
  dir=$(cd / && GO111MODULE=on GOFLAGS=-modcacherw "$GO" mod download -json "$tc_mod" 2>"$log" \
        | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p') || true
  [ -n "$dir" ] && [ -e "$dir/bin/go" ] || fail "download the Go toolchain $tc_mod" "$log"
  chmod -R u+x "$dir/bin" "$dir/pkg/tool"
  GO="$dir/bin/go"
  go_version=$("$GO" env GOVERSION)
elif older "${go_version#go}" "$GO_MIN"; then
  export GOTOOLCHAIN="go$GO_MIN+auto"   # go itself fetches go$GO_MIN (a Go module) and builds with it
  go_version=$("$GO" env GOVERSION)
fi

if [ "${1:-}" = argocd ]; then
  # shellcheck source=scripts/build-argocd.sh
  . "$ROOT/scripts/build-argocd.sh"
  build_argocd
  exit 0
fi

# Step 2: the cache key: readable versions, then a hash of everything that changes the binaries.
version_of() { awk -v m="$1" '$1 == m && $2 ~ /^v/ {print $2; exit}' "$TOOLS/go.mod"; }
k8s=$(version_of k8s.io/kubernetes)
etcd=$(version_of go.etcd.io/etcd/server/v3)
argocd=$(version_of github.com/argoproj/argo-cd/v3)
[ -n "$k8s" ] && [ -n "$etcd" ] && [ -n "$argocd" ] || fail "read the pinned versions from tests/tools/go.mod"
LINE31="$TOOLS/argocd-3.1"
# (tests/tools/argocd is Argo CD's own module, with a key of its own: its files are not part of this one.)
hash=$( (cat "$TOOLS/go.mod" "$TOOLS/go.sum" "$LINE31/go.mod" "$LINE31/go.sum"; echo "$BUILD_FLAGS"
         find "$TOOLS" -path "$TOOLS/argocd" -prune -o -name '*.go' -print0 | sort -z | xargs -0 cat;
         echo "$go_version $("$GO" env GOOS GOARCH)") | sha256sum | cut -c1-12)
KEY="k8s-$k8s.etcd-$etcd.argocd-$argocd.$go_version.$hash"
OUT="$CACHE/$KEY"
BINARIES="kube-apiserver etcd kubectl argodiff notify argodiff-argocd-3.1"
complete() { for b in $BINARIES; do [ -x "$OUT/$b" ] || return 1; done; }
if complete; then
  touch "$OUT"   # in use: see the clean-up below
  echo "$OUT"
  exit 0
fi

# Step 3: build, one caller at a time; the folder appears complete or not at all.
mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"
flock -n 9 || { say "waiting for another build (lock $CACHE/.lock)"; flock 9; }
if complete; then
  echo "$OUT"   # another caller built it while we waited
  exit 0
fi
tmp=$(mktemp -d "$CACHE/.build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
say "building $KEY (the first build takes a while; later runs reuse $OUT)"
start=$(date +%s)
# Two cores shared with other work: at most 2 packages compiled at once, a soft memory limit for each compiler,
# niced. -trimpath: no local paths in the binaries; -s -w: no symbol tables (smaller; nobody debugs these).
build() {  # build STEP OUTPUT PACKAGE [LDFLAGS [MODULE-DIR]]
  local log="$tmp/$2.log"
  say "step: $1 ($3)"
  (cd "${5:-$TOOLS}" && CGO_ENABLED=0 GOMEMLIMIT=${GOMEMLIMIT:-3GiB} GOFLAGS="${GOFLAGS:-} -mod=readonly" \
     nice -n 5 "$GO" build -p 2 -trimpath -ldflags="-s -w ${4:-}" -o "$tmp/$2" "$3") >"$log" 2>&1 \
    || fail "$1: go build $3 (in tests/tools)" "$log"
}
# What Kubernetes' own build stamps in (hack/lib/version.sh), so that /version says the release it is.
minor=${k8s#v1.}; minor=${minor%%.*}
k8s_version="-X k8s.io/component-base/version.gitVersion=$k8s -X k8s.io/component-base/version.gitMajor=1"
k8s_version+=" -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean"
say "step: download the modules (go mod download, in tests/tools)"
(cd "$TOOLS" && "$GO" mod download) >"$tmp/download.log" 2>&1 || fail "download the modules" "$tmp/download.log"
build "build kube-apiserver" kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver "$k8s_version"
build "build etcd" etcd go.etcd.io/etcd/server/v3
# kubectl reads its version from client-go's package, the API server from component-base's: stamp both.
build "build kubectl" kubectl k8s.io/kubernetes/cmd/kubectl "$k8s_version ${k8s_version//component-base/client-go\/pkg}"
build "build argodiff" argodiff ./argodiff
build "build notify" notify ./notify
# The older line: its own module (go.mod/go.sum of tests/tools/argocd-3.1) around a copy of the same argodiff source.
src31="$tmp/src-argocd-3.1"
mkdir -p "$src31/argodiff"
cp "$LINE31/go.mod" "$LINE31/go.sum" "$src31/"
cp "$TOOLS/argodiff/main.go" "$src31/argodiff/"
(cd "$src31" && "$GO" mod download) >"$tmp/download-3.1.log" 2>&1 \
  || fail "download the modules of tests/tools/argocd-3.1" "$tmp/download-3.1.log"
build "build argodiff for Argo CD 3.1" argodiff-argocd-3.1 ./argodiff "" "$src31"
rm -rf "$src31"
rm -f "$tmp"/*.log
chmod 755 "$tmp"
rm -rf "$OUT"
mv "$tmp" "$OUT" || fail "move the binaries to $OUT"
trap - EXIT
# Builds of other keys (older pins, other work trees) go when unused for two weeks.
find "$CACHE" -mindepth 1 -maxdepth 1 -type d \( -name 'k8s-*' -o -name 'argocd-*' \) -mtime +14 -exec rm -rf {} + 2>/dev/null || true
say "built in $(( $(date +%s) - start ))s: $(du -sh "$OUT" | cut -f1) in $OUT"
echo "$OUT"
