//go:build kcache_has_pod_group_objects && !kcache_has_generic_pod_groups

package main

import (
	"strings"

	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	fwk "k8s.io/kube-scheduler/framework"
)

// v1.37: one cache method per kind and op, each returning at once while its
// kind's gate is off, and GetRootKeyForGroup on the cache.

func (r request) podGroup(key string) (*schedulingv1beta1.PodGroup, error) {
	group := &schedulingv1beta1.PodGroup{}
	return group, r.decode(key, group)
}

func (r request) compositePodGroup(key string) (*schedulingv1alpha3.CompositePodGroup, error) {
	group := &schedulingv1alpha3.CompositePodGroup{}
	return group, r.decode(key, group)
}

func (s *session) addPodGroup(r request) (map[string]any, error) {
	group, err := r.podGroup("pod_group")
	if err != nil {
		return nil, err
	}
	s.cache.AddPodGroup(group)
	return nil, nil
}

func (s *session) updatePodGroup(r request) (map[string]any, error) {
	oldGroup, err := r.podGroup("old")
	if err != nil {
		return nil, err
	}
	newGroup, err := r.podGroup("new")
	if err != nil {
		return nil, err
	}
	s.cache.UpdatePodGroup(s.logger, oldGroup, newGroup)
	return nil, nil
}

func (s *session) removePodGroup(r request) (map[string]any, error) {
	group, err := r.podGroup("pod_group")
	if err != nil {
		return nil, err
	}
	s.cache.RemovePodGroup(s.logger, group)
	return nil, nil
}

func (s *session) addCompositePodGroup(r request) (map[string]any, error) {
	group, err := r.compositePodGroup("composite_pod_group")
	if err != nil {
		return nil, err
	}
	s.cache.AddCompositePodGroup(s.logger, group)
	return nil, nil
}

func (s *session) updateCompositePodGroup(r request) (map[string]any, error) {
	oldGroup, err := r.compositePodGroup("old")
	if err != nil {
		return nil, err
	}
	newGroup, err := r.compositePodGroup("new")
	if err != nil {
		return nil, err
	}
	s.cache.UpdateCompositePodGroup(s.logger, oldGroup, newGroup)
	return nil, nil
}

func (s *session) removeCompositePodGroup(r request) (map[string]any, error) {
	group, err := r.compositePodGroup("composite_pod_group")
	if err != nil {
		return nil, err
	}
	s.cache.RemoveCompositePodGroup(s.logger, group)
	return nil, nil
}

// getRootKeyForGroup asks upstream's GetRootKeyForGroup about an entity key
// written as upstream prints one; a root not found answers null.
func (s *session) getRootKeyForGroup(r request) (map[string]any, error) {
	text, err := r.str("key")
	if err != nil {
		return nil, err
	}
	parts := strings.Split(text, "/")
	if len(parts) != 3 {
		return nil, protocolErrorf("key: expected <kind>/<namespace>/<name>, got %q", text)
	}
	key := fwk.EntityKey{Type: fwk.EntityKeyType(parts[0]), Namespace: parts[1], Name: parts[2]}
	root, found, err := s.cache.GetRootKeyForGroup(key)
	if err != nil {
		return nil, err
	}
	if !found {
		return map[string]any{"root_key": nil}, nil
	}
	return map[string]any{"root_key": root.String()}, nil
}
