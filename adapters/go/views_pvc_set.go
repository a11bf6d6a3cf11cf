//go:build !kcache_v137

package main

import (
	"sort"

	"k8s.io/kubernetes/pkg/scheduler/framework"

	cache "kcache/goadapter/internal/upstreamcache"
)

// releaseNodeView: a v1.35 or v1.36 NodeInfo has no list beyond the common ones.
type releaseNodeView struct{}

func viewReleaseNode(*framework.NodeInfo) releaseNodeView { return releaseNodeView{} }

// releaseSnapshotView: v1.35 and v1.36 snapshots hold a set of used claims.
type releaseSnapshotView struct {
	UsedPVCs []string `json:"used_pvcs"`
}

func viewReleaseSnapshot(snapshot *cache.Snapshot) releaseSnapshotView {
	pvcs := snapshot.UsedPVCs().UnsortedList()
	sort.Strings(pvcs)
	return releaseSnapshotView{UsedPVCs: pvcs}
}
