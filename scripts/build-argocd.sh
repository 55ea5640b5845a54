# Sourced by scripts/build-go-tools.sh (`scripts/build-go-tools.sh argocd`), which has chosen $GO and $go_version and
# defines $ROOT, $CACHE, fail and say. Builds Argo CD itself, once per machine, for the suite's real Argo CD
# (tests/harness/argocd_stack.py, `make argocd`):
#   1. the argo-cd module zip of the pinned version from the Go module proxy (checked against go.sum);
#   2. a copy of it (hard links where possible) with three changes, each checked to have happened:
#      * patch/zz_validate_external_url.go added: the module the proxy serves for v3.2.12 (upstream commit 1966269f;
#        the tag was moved afterwards to a commit the proxy does not serve) does not compile without it;
#      * the application controller's and the notifications controller's metrics listeners, which bind 0.0.0.0
#        with no flag to change it, bind 127.0.0.1 instead: the suite's traffic stays on loopback, no root needed;
#   3. go build of github.com/argoproj/argo-cd/v3/cmd in the module tests/tools/argocd/ (go.mod replaces the module
#      by that copy).
# Output: $CACHE/argocd-<version>.<go>.<hash>/argocd (one binary; ARGOCD_BINARY_NAME picks the component) and
# crds/ (the release's Application, AppProject and ApplicationSet CRDs). The hash covers the module's go.mod, go.sum
# and patch/, the flags and the Go version; this file is not part of it (a comment here rebuilds nothing), so a
# change to how the copy is patched must bump ARGOCD_BUILD below.
# shellcheck shell=bash

ARGOCD_BUILD="CGO_ENABLED=0 -trimpath -ldflags=-s -w, version stamped; metrics listeners on 127.0.0.1 (2)"

build_argocd() {
  local mod="$ROOT/tests/tools/argocd" version hash key out tmp zipdir copy start f
  version=$(awk '$1 == "github.com/argoproj/argo-cd/v3" && $2 ~ /^v/ {print $2; exit}' "$mod/go.mod")
  [ -n "$version" ] || fail "read the pinned Argo CD version from tests/tools/argocd/go.mod"
  hash=$( (cat "$mod/go.mod" "$mod/go.sum" "$mod"/patch/*; echo "$ARGOCD_BUILD"
           echo "$go_version $("$GO" env GOOS GOARCH)") | sha256sum | cut -c1-12)
  key="argocd-$version.$go_version.$hash"
  out="$CACHE/$key"
  if [ -x "$out/argocd" ] && [ -s "$out/crds/application-crd.yaml" ]; then
    touch "$out"
    echo "$out"
    return 0
  fi
  mkdir -p "$CACHE"
  exec 9>"$CACHE/.lock"
  flock -n 9 || { say "waiting for another build (lock $CACHE/.lock)"; flock 9; }
  if [ -x "$out/argocd" ] && [ -s "$out/crds/application-crd.yaml" ]; then
    echo "$out"
    return 0
  fi
  # In the cache folder: the same file system as the module cache (usually), so the copy is hard links.
  tmp=$(mktemp -d "$CACHE/.build-argocd.XXXXXX")
  # The copy's folders come read-only from the module cache: make folders (never files: they are hard links to the
  # module cache's) writable before removing.
  # shellcheck disable=SC2064
  trap "find '$tmp' -type d -exec chmod u+w {} + 2>/dev/null; rm -rf '$tmp'" EXIT
  say "building $key (Argo CD: about 10 minutes on 2 cores from cold, 1-2 minutes on top of the Go tools' caches)"
  start=$(date +%s)
  mkdir -p "$tmp/src" "$tmp/out/crds"
  cp "$mod/go.mod" "$mod/go.sum" "$tmp/src/"

  say "step: download github.com/argoproj/argo-cd/v3@$version"
  zipdir=$(cd "$tmp" && GOFLAGS= "$GO" mod download -json "github.com/argoproj/argo-cd/v3@$version" 2>"$tmp/download.log" \
           | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p') || true
  [ -n "$zipdir" ] && [ -d "$zipdir/cmd" ] || fail "download github.com/argoproj/argo-cd/v3@$version" "$tmp/download.log"

  say "step: patched copy of the module"
  copy="$tmp/src/argo-cd-$version"
  cp -al "$zipdir" "$copy" 2>/dev/null || cp -r "$zipdir" "$copy"
  find "$copy" -type d -exec chmod u+w {} +
  cp "$mod"/patch/*.go "$copy/util/settings/"
  for f in controller/appcontroller.go cmd/argocd-notification/commands/controller.go; do
    # sed -i writes a new file and renames it over the link: the module cache's file is left alone.
    sed -i 's/fmt\.Sprintf("0\.0\.0\.0:%d", metricsPort)/fmt.Sprintf("127.0.0.1:%d", metricsPort)/' "$copy/$f"
    grep -q '"127.0.0.1:%d", metricsPort' "$copy/$f" \
      || fail "patch the metrics listener of $f to 127.0.0.1 (the line to change is not in Argo CD $version)"
  done
  cp "$copy"/manifests/crds/application-crd.yaml "$copy"/manifests/crds/appproject-crd.yaml \
     "$copy"/manifests/crds/applicationset-crd.yaml "$tmp/out/crds/" || fail "copy Argo CD's CRDs"

  say "step: download the modules of the build (in tests/tools/argocd)"
  (cd "$tmp/src" && "$GO" list -mod=readonly -deps github.com/argoproj/argo-cd/v3/cmd) >/dev/null 2>"$tmp/list.log" \
    || fail "download the modules of Argo CD's build (go list -deps, in tests/tools/argocd)" "$tmp/list.log"

  say "step: build Argo CD (github.com/argoproj/argo-cd/v3/cmd)"
  local p=github.com/argoproj/argo-cd/v3/common kubectl
  kubectl=$(awk '$1 == "k8s.io/kubectl" && $2 == "=>" {print $4; exit}' "$mod/go.mod")
  (cd "$tmp/src" && CGO_ENABLED=0 GOMEMLIMIT=${GOMEMLIMIT:-3GiB} GOFLAGS="${GOFLAGS:-} -mod=readonly" \
     nice -n 5 "$GO" build -p 2 -trimpath \
       -ldflags="-s -w -X $p.version=${version#v} -X $p.gitTag=$version -X $p.gitTreeState=clean -X $p.kubectlVersion=$kubectl" \
       -o "$tmp/out/argocd" github.com/argoproj/argo-cd/v3/cmd) >"$tmp/build.log" 2>&1 \
    || fail "build Argo CD: go build github.com/argoproj/argo-cd/v3/cmd (in tests/tools/argocd)" "$tmp/build.log"
  ARGOCD_BINARY_NAME=argocd "$tmp/out/argocd" version --client --short >"$tmp/version.log" 2>&1 \
    || fail "run the built Argo CD (argocd version --client)" "$tmp/version.log"

  chmod 755 "$tmp/out"
  rm -rf "$out"
  mv "$tmp/out" "$out" || fail "move Argo CD to $out"
  say "built Argo CD $version in $(( $(date +%s) - start ))s: $(du -sh "$out" | cut -f1) in $out"
  echo "$out"
}
