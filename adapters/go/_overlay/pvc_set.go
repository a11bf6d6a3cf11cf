//go:build !kcache_counts_pvc_references

// Added to upstream's cache package at build time (see ../README.md).
//
// Up to v1.36 a snapshot keeps the claims its pods use as an unexported set.

package cache

import "k8s.io/apimachinery/pkg/util/sets"

// UsedPVCs is the snapshot's set of "namespace/name" claim keys (usedPVCSet).
func (s *Snapshot) UsedPVCs() sets.Set[string] {
	return s.usedPVCSet
}
