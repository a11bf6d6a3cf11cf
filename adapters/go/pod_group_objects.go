//go:build kcache_has_pod_group_objects

package main

import cache "kcache/goadapter/internal/upstreamcache"

// PodGroup and CompositePodGroup objects and their listers, upstream's since v1.37;
// the ops that store them changed shape in v1.38 (generic_pod_groups*.go).

func (s *session) getPodGroup(r request) (map[string]any, error) {
	namespace, name, err := groupName(r)
	if err != nil {
		return nil, err
	}
	group, err := s.cache.PodGroups().Get(namespace, name)
	if err != nil {
		return nil, err
	}
	return map[string]any{"pod_group": group}, nil
}

// getCompositePodGroupState asks upstream's lister; the object's presence,
// which its answer does not show, is read from the state it found.
func (s *session) getCompositePodGroupState(r request) (map[string]any, error) {
	namespace, name, err := groupName(r)
	if err != nil {
		return nil, err
	}
	if _, err := s.cache.CompositePodGroupStates().Get(namespace, name); err != nil {
		return nil, err
	}
	views := cache.CompositePodGroupViews(s.upstream())
	return map[string]any{"composite_pod_group_state": views[namespace+"/"+name]}, nil
}

func (s *session) getCompositePodGroup(r request) (map[string]any, error) {
	namespace, name, err := groupName(r)
	if err != nil {
		return nil, err
	}
	group, err := s.cache.CompositePodGroups().Get(namespace, name)
	if err != nil {
		return nil, err
	}
	return map[string]any{"composite_pod_group": group}, nil
}

// compositeSnapshotView: the composite copies a v1.37 snapshot holds.
type compositeSnapshotView struct {
	CompositePodGroups map[string]cache.CompositePodGroupSets `json:"composite_pod_groups"`
}

func viewCompositeSnapshot(snapshot *cache.Snapshot) compositeSnapshotView {
	return compositeSnapshotView{cache.SnapshotCompositePodGroupViews(snapshot)}
}

func (s *session) compositePodGroups(request) (map[string]any, error) {
	return map[string]any{"composite_pod_groups": cache.CompositePodGroupViews(s.upstream())}, nil
}
