//go:build kcache_has_pod_groups

package main

import (
	cache "kcache/goadapter/internal/upstreamcache"
)

// The pod-group member ops and the state lister, upstream's since v1.36.

func (s *session) addPodGroupMember(r request) (map[string]any, error) {
	pod, err := r.pod("pod")
	if err != nil {
		return nil, err
	}
	s.cache.AddPodGroupMember(pod)
	return nil, nil
}

func (s *session) updatePodGroupMember(r request) (map[string]any, error) {
	oldPod, err := r.pod("old")
	if err != nil {
		return nil, err
	}
	newPod, err := r.pod("new")
	if err != nil {
		return nil, err
	}
	s.cache.UpdatePodGroupMember(s.logger, oldPod, newPod)
	return nil, nil
}

func (s *session) removePodGroupMember(r request) (map[string]any, error) {
	pod, err := r.pod("pod")
	if err != nil {
		return nil, err
	}
	s.cache.RemovePodGroupMember(pod)
	return nil, nil
}

// getPodGroupState asks upstream's lister, which decides the answer or the
// refusal; the sets are then read from the state it found, by UID.
func (s *session) getPodGroupState(r request) (map[string]any, error) {
	namespace, name, err := groupName(r)
	if err != nil {
		return nil, err
	}
	if _, err := s.cache.PodGroupStates().Get(namespace, name); err != nil {
		return nil, err
	}
	return map[string]any{"pod_group_state": cache.PodGroupViews(s.upstream())[namespace+"/"+name]}, nil
}

func (s *session) podGroups(request) (map[string]any, error) {
	return map[string]any{"pod_groups": cache.PodGroupViews(s.upstream())}, nil
}

// groupSnapshotView: the pod-group copies a snapshot holds.
type groupSnapshotView struct {
	PodGroups map[string]cache.PodGroupSets `json:"pod_groups"`
}

func viewGroupSnapshot(snapshot *cache.Snapshot) groupSnapshotView {
	return groupSnapshotView{cache.SnapshotPodGroupViews(snapshot)}
}

// upstream is the cache the adapter built, without the adapter's wrapper.
func (s *session) upstream() cache.Cache {
	return s.cache.(expiryless).Cache
}

func groupName(r request) (namespace, name string, err error) {
	if namespace, err = r.str("namespace"); err != nil {
		return "", "", err
	}
	name, err = r.str("name")
	return namespace, name, err
}
