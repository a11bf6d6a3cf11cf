//go:build !kcache_counts_pvc_references

package main

// pvcSnapshotKeys is the used-claim set of a SNAPSHOT-VIEW.
func pvcSnapshotKeys(claims ...string) map[string]any {
	used := []any{}
	for _, claim := range claims {
		used = append(used, claim)
	}
	return map[string]any{"used_pvcs": used}
}
