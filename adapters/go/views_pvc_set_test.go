//go:build !kcache_v137

package main

// releaseNodeKeys: v1.35 and v1.36 NODE-VIEWs have only the common keys.
var releaseNodeKeys = map[string]any{}

// releaseSnapshotKeys is the used-claim set of a v1.35 or v1.36 SNAPSHOT-VIEW.
func releaseSnapshotKeys(claims ...string) map[string]any {
	used := []any{}
	for _, claim := range claims {
		used = append(used, claim)
	}
	return map[string]any{"used_pvcs": used}
}
