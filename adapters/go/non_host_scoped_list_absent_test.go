//go:build !kcache_has_non_host_scoped_list

package main

// nonHostScopedNodeKeys and nonHostScopedSnapshotKeys: the views have only the common keys.
var nonHostScopedNodeKeys, nonHostScopedSnapshotKeys = map[string]any{}, map[string]any{}
