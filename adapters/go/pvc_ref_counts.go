//go:build kcache_counts_pvc_references

package main

import (
	"maps"

	cache "kcache/goadapter/internal/upstreamcache"
)

// pvcSnapshotView: the snapshot counts claim references instead of holding a set.
type pvcSnapshotView struct {
	UsedPVCRefCounts map[string]int `json:"used_pvc_ref_counts"`
}

func viewPVCSnapshot(snapshot *cache.Snapshot) pvcSnapshotView {
	counts := map[string]int{}
	maps.Copy(counts, snapshot.UsedPVCRefCounts())
	return pvcSnapshotView{UsedPVCRefCounts: counts}
}
