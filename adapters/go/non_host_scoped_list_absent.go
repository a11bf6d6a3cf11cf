//go:build !kcache_has_non_host_scoped_list

package main

import (
	"k8s.io/kubernetes/pkg/scheduler/framework"

	cache "kcache/goadapter/internal/upstreamcache"
)

// nonHostScopedNodeView: a NodeInfo has no list beyond the common ones.
type nonHostScopedNodeView struct{}

func viewNonHostScopedNode(*framework.NodeInfo) nonHostScopedNodeView {
	return nonHostScopedNodeView{}
}

// nonHostScopedSnapshotView: nor has the snapshot.
type nonHostScopedSnapshotView struct{}

func viewNonHostScopedSnapshot(*cache.Snapshot) nonHostScopedSnapshotView {
	return nonHostScopedSnapshotView{}
}
