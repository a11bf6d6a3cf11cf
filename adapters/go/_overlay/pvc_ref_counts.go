//go:build kcache_counts_pvc_references

// Added to upstream's cache package at build time (see ../README.md).
//
// v1.37 snapshots count claim references (usedPVCRefCounts) instead of
// holding a set; IsPVCUsedByPods only tells count > 0, so this exposes them.

package cache

// UsedPVCRefCounts is the snapshot's "namespace/name" -> reference count map.
func (s *Snapshot) UsedPVCRefCounts() map[string]int {
	return s.usedPVCRefCounts
}
