//go:build kcache_has_generic_pod_groups

package main

import (
	"strings"

	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/features"
)

// From v1.38 the cache takes both kinds as one GenericPodGroup
// (AddGenericPodGroup, UpdateGenericPodGroup with the new object alone,
// RemoveGenericPodGroup) and checks no gate for the object itself:
// kube-scheduler registers the PodGroup and CompositePodGroup informer
// handlers only while their gates are on (eventhandlers.go).  The adapter
// does what those handlers do, so the protocol's ops keep their meaning:
// each reaches the cache only while its kind's gate is on.

func (r request) podGroup(key string) (*schedulingv1beta1.PodGroup, error) {
	group := &schedulingv1beta1.PodGroup{}
	return group, r.decode(key, group)
}

func (r request) compositePodGroup(key string) (*schedulingv1beta1.CompositePodGroup, error) {
	group := &schedulingv1beta1.CompositePodGroup{}
	return group, r.decode(key, group)
}

func podGroupsHandled() bool {
	return utilfeature.DefaultFeatureGate.Enabled(features.GenericWorkload)
}

func compositePodGroupsHandled() bool {
	return utilfeature.DefaultFeatureGate.Enabled(features.CompositePodGroup)
}

func (s *session) addPodGroup(r request) (map[string]any, error) {
	group, err := r.podGroup("pod_group")
	if err != nil || !podGroupsHandled() {
		return nil, err
	}
	s.cache.AddGenericPodGroup(fwk.NewGenericPodGroup(group))
	return nil, nil
}

// updatePodGroup hands the cache the new object alone, as the handler does
// once it has seen the same UID and a new resourceVersion.
func (s *session) updatePodGroup(r request) (map[string]any, error) {
	if _, err := r.podGroup("old"); err != nil {
		return nil, err
	}
	group, err := r.podGroup("new")
	if err != nil || !podGroupsHandled() {
		return nil, err
	}
	s.cache.UpdateGenericPodGroup(s.logger, fwk.NewGenericPodGroup(group))
	return nil, nil
}

func (s *session) removePodGroup(r request) (map[string]any, error) {
	group, err := r.podGroup("pod_group")
	if err != nil || !podGroupsHandled() {
		return nil, err
	}
	s.cache.RemoveGenericPodGroup(s.logger, fwk.NewGenericPodGroup(group))
	return nil, nil
}

func (s *session) addCompositePodGroup(r request) (map[string]any, error) {
	group, err := r.compositePodGroup("composite_pod_group")
	if err != nil || !compositePodGroupsHandled() {
		return nil, err
	}
	s.cache.AddGenericPodGroup(fwk.NewGenericCompositePodGroup(group))
	return nil, nil
}

func (s *session) updateCompositePodGroup(r request) (map[string]any, error) {
	if _, err := r.compositePodGroup("old"); err != nil {
		return nil, err
	}
	group, err := r.compositePodGroup("new")
	if err != nil || !compositePodGroupsHandled() {
		return nil, err
	}
	s.cache.UpdateGenericPodGroup(s.logger, fwk.NewGenericCompositePodGroup(group))
	return nil, nil
}

func (s *session) removeCompositePodGroup(r request) (map[string]any, error) {
	group, err := r.compositePodGroup("composite_pod_group")
	if err != nil || !compositePodGroupsHandled() {
		return nil, err
	}
	s.cache.RemoveGenericPodGroup(s.logger, fwk.NewGenericCompositePodGroup(group))
	return nil, nil
}

// getRootKeyForGroup asks the cache's FindRootGroup about an entity key
// written as upstream prints one, and answers the root's key (null when no
// root is found).
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
	root, err := s.cache.FindRootGroup(key)
	if err != nil {
		return nil, err
	}
	if root == nil {
		return map[string]any{"root_key": nil}, nil
	}
	return map[string]any{"root_key": root.GetKey().String()}, nil
}
