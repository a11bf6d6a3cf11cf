//go:build !kcache_counts_pvc_references

package main

import (
	"sort"

	cache "kcache/goadapter/internal/upstreamcache"
)

// pvcSnapshotView: the snapshot holds a set of used claims.
type pvcSnapshotView struct {
	UsedPVCs []string `json:"used_pvcs"`
}

func viewPVCSnapshot(snapshot *cache.Snapshot) pvcSnapshotView {
	pvcs := snapshot.UsedPVCs().UnsortedList()
	sort.Strings(pvcs)
	return pvcSnapshotView{UsedPVCs: pvcs}
}
