//go:build !kcache_has_pod_groups

package main

// groupSnapshotKeys: a SNAPSHOT-VIEW has no pod-group keys.
var groupSnapshotKeys = map[string]any{}
