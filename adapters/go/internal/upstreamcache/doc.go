// Package cache is upstream's k8s.io/kubernetes/pkg/scheduler/backend/cache,
// compiled here under another import path.
//
// This directory holds no upstream code: the build's -overlay file maps
// upstream's non-test sources, read in place from the verified module cache,
// into this package, together with the accessor files under ../../_overlay.
// Go refuses overlays that add files beneath GOMODCACHE, so the package is
// moved instead.  Build through kcache.go_adapter (see ../../README.md); a
// plain `go build` stops here with undefined names.
package cache
