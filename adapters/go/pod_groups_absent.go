//go:build !kcache_has_pod_groups

package main

import cache "kcache/goadapter/internal/upstreamcache"

// A cache without pod groups (before v1.36): every pod-group op is unsupported, and
// the observations see none.

func (*session) addPodGroupMember(request) (map[string]any, error) {
	return nil, unsupported("add_pod_group_member")
}

func (*session) updatePodGroupMember(request) (map[string]any, error) {
	return nil, unsupported("update_pod_group_member")
}

func (*session) removePodGroupMember(request) (map[string]any, error) {
	return nil, unsupported("remove_pod_group_member")
}

func (*session) getPodGroupState(request) (map[string]any, error) {
	return nil, unsupported("get_pod_group_state")
}

func (*session) podGroups(request) (map[string]any, error) {
	return map[string]any{"pod_groups": map[string]any{}}, nil
}

// groupSnapshotView: a v1.35 snapshot holds no pod groups.
type groupSnapshotView struct{}

func viewGroupSnapshot(*cache.Snapshot) groupSnapshotView {
	return groupSnapshotView{}
}
