//go:build kcache_has_pod_group_objects

// Added to upstream's cache package at build time (see ../README.md).
//
// The listers answer one group by name, and only through its exported
// methods (UnscheduledPods keys by pod name, a composite's object is not
// among them); kcache compares every group and composite the cache holds, so
// this reads the states themselves, the cache's and a snapshot's copies.

package cache

import (
	"sort"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
)

// PodGroupSets is one pod-group state as kcache's POD-GROUP-VIEW shows it.
type PodGroupSets struct {
	All         []string `json:"all"`
	Unscheduled []string `json:"unscheduled"`
	Assumed     []string `json:"assumed"`
	Assigned    []string `json:"assigned"`
	// UnscheduledPods: the names upstream's UnscheduledPods keys its answer by.
	UnscheduledPods []string `json:"unscheduled_pods"`
	HasPodGroup     bool     `json:"has_pod_group"`
}

// CompositePodGroupSets is one composite state as COMPOSITE-POD-GROUP-VIEW shows it.
type CompositePodGroupSets struct {
	HasCompositePodGroup bool     `json:"has_composite_pod_group"`
	Children             []string `json:"children"`
}

// PodGroupViews is every pod-group state of c, keyed "namespace/name".
func PodGroupViews(c Cache) map[string]PodGroupSets {
	impl := c.(*cacheImpl)
	impl.mu.RLock()
	defer impl.mu.RUnlock()
	views := map[string]PodGroupSets{}
	for key, state := range impl.podGroupStates {
		views[key.Namespace+"/"+key.Name] = podGroupSets(&state.podGroupStateData)
	}
	return views
}

// SnapshotPodGroupViews is every pod-group copy s holds, keyed "namespace/name".
func SnapshotPodGroupViews(s *Snapshot) map[string]PodGroupSets {
	views := map[string]PodGroupSets{}
	for key, state := range s.podGroupStates {
		views[key.Namespace+"/"+key.Name] = podGroupSets(&state.podGroupStateData)
	}
	return views
}

func podGroupSets(state *podGroupStateData) PodGroupSets {
	return PodGroupSets{
		All:             sortedUIDs(sets.KeySet(state.allPods)),
		Unscheduled:     sortedUIDs(state.unscheduledPods),
		Assumed:         sortedUIDs(sets.KeySet(state.assumedPods)),
		Assigned:        sortedUIDs(state.assignedPods),
		UnscheduledPods: sortedNames(state.unscheduledPodsMap()),
		HasPodGroup:     state.podGroup != nil,
	}
}

// CompositePodGroupViews is every composite state of c, keyed "namespace/name".
func CompositePodGroupViews(c Cache) map[string]CompositePodGroupSets {
	impl := c.(*cacheImpl)
	impl.mu.RLock()
	defer impl.mu.RUnlock()
	views := map[string]CompositePodGroupSets{}
	for key, state := range impl.compositePodGroupStates {
		views[key.Namespace+"/"+key.Name] = compositeSets(&state.compositePodGroupStateData)
	}
	return views
}

// SnapshotCompositePodGroupViews is every composite copy s holds, keyed "namespace/name".
func SnapshotCompositePodGroupViews(s *Snapshot) map[string]CompositePodGroupSets {
	views := map[string]CompositePodGroupSets{}
	for key, state := range s.compositePodGroupStates {
		views[key.Namespace+"/"+key.Name] = compositeSets(&state.compositePodGroupStateData)
	}
	return views
}

func compositeSets(state *compositePodGroupStateData) CompositePodGroupSets {
	children := make([]string, 0, len(state.children))
	for child := range state.children {
		children = append(children, child.String())
	}
	sort.Strings(children)
	return CompositePodGroupSets{
		HasCompositePodGroup: state.compositePodGroup != nil,
		Children:             children,
	}
}

func sortedNames(pods map[string]*v1.Pod) []string {
	out := make([]string, 0, len(pods))
	for name := range pods {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

func sortedUIDs(uids sets.Set[types.UID]) []string {
	out := make([]string, 0, len(uids))
	for uid := range uids {
		out = append(out, string(uid))
	}
	sort.Strings(out)
	return out
}
