#!/bin/sh
# Pin one Kubernetes release in one module file of this adapter.
#
#   ./pin.sh v1.35.8 go.mod
#   ./pin.sh v1.36.0 v1.36.mod
#   GOTOOLCHAIN=go1.27.3 ./pin.sh v1.38.0-beta.0 v1.38.mod   # a release asking for a newer Go
#
# k8s.io/kubernetes points its staging modules (k8s.io/api, apimachinery, ...)
# at ./staging/... in its own go.mod; those replaces do not apply to a module
# that depends on it, so each staging module is pinned here to the matching
# v0.x.y release.  The list comes from the pinned tag's go.mod, never by hand.
set -eu
cd "$(dirname "$0")"

release=${1:?usage: pin.sh K8S_RELEASE [MODFILE]}
modfile=${2:-go.mod}
staging=v0.${release#v1.}

upstream_gomod=$(go mod download -json "k8s.io/kubernetes@$release" |
	sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')
[ -n "$upstream_gomod" ] || { echo "pin.sh: no go.mod for k8s.io/kubernetes@$release" >&2; exit 1; }

for module in $(sed -n 's#^[[:space:]]*\(k8s\.io/[a-z0-9-]*\) => \./staging/.*#\1#p' "$upstream_gomod"); do
	go mod edit -modfile="$modfile" -replace "$module=$module@$staging"
done
go mod edit -modfile="$modfile" -require "k8s.io/kubernetes@$release"
# -e: a staging module that only upstream's own tests import may be one the
# proxy does not serve (k8s.io/ktesting, new in v1.38); the adapter never builds it
go mod tidy -e -modfile="$modfile"
# the toolchain the pin was made with, when it is not the machine's own:
# kcache.targets.go builds with the module file's toolchain line
case "${GOTOOLCHAIN:-local}" in
go1.*) go mod edit -modfile="$modfile" -toolchain="$GOTOOLCHAIN" ;;
esac
