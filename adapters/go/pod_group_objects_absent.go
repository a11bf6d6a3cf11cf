//go:build !kcache_has_pod_group_objects

package main

import cache "kcache/goadapter/internal/upstreamcache"

// Before v1.37 the cache holds no PodGroup or CompositePodGroup objects:
// their ops are unsupported, and the observation sees no composites.

func (*session) addPodGroup(request) (map[string]any, error) {
	return nil, unsupported("add_pod_group")
}

func (*session) updatePodGroup(request) (map[string]any, error) {
	return nil, unsupported("update_pod_group")
}

func (*session) removePodGroup(request) (map[string]any, error) {
	return nil, unsupported("remove_pod_group")
}

func (*session) addCompositePodGroup(request) (map[string]any, error) {
	return nil, unsupported("add_composite_pod_group")
}

func (*session) updateCompositePodGroup(request) (map[string]any, error) {
	return nil, unsupported("update_composite_pod_group")
}

func (*session) removeCompositePodGroup(request) (map[string]any, error) {
	return nil, unsupported("remove_composite_pod_group")
}

func (*session) getPodGroup(request) (map[string]any, error) {
	return nil, unsupported("get_pod_group")
}

func (*session) getCompositePodGroupState(request) (map[string]any, error) {
	return nil, unsupported("get_composite_pod_group_state")
}

func (*session) getCompositePodGroup(request) (map[string]any, error) {
	return nil, unsupported("get_composite_pod_group")
}

func (*session) getRootKeyForGroup(request) (map[string]any, error) {
	return nil, unsupported("get_root_key_for_group")
}

func (*session) compositePodGroups(request) (map[string]any, error) {
	return map[string]any{"composite_pod_groups": map[string]any{}}, nil
}

// compositeSnapshotView: snapshots before v1.37 hold no composites.
type compositeSnapshotView struct{}

func viewCompositeSnapshot(*cache.Snapshot) compositeSnapshotView {
	return compositeSnapshotView{}
}
