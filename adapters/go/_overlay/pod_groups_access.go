//go:build kcache_has_pod_groups && !kcache_has_pod_group_objects

// Added to upstream's cache package at build time (see ../README.md).
//
// The listers answer one group by name, and only through its exported
// methods (UnscheduledPods keys by pod name); kcache compares every group the
// cache holds, by UID, so this reads the states themselves: the cache's, and
// the copies a snapshot holds.

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
}

// PodGroupViews is every pod-group state of c, keyed "namespace/name".
func PodGroupViews(c Cache) map[string]PodGroupSets {
	impl := c.(*cacheImpl)
	impl.mu.RLock()
	defer impl.mu.RUnlock()
	views := map[string]PodGroupSets{}
	for key, state := range impl.podGroupStates {
		views[key.namespace+"/"+key.name] = podGroupSets(&state.podGroupStateData)
	}
	return views
}

// SnapshotPodGroupViews is every pod-group copy s holds, keyed "namespace/name".
func SnapshotPodGroupViews(s *Snapshot) map[string]PodGroupSets {
	views := map[string]PodGroupSets{}
	for key, state := range s.podGroupStates {
		views[key.namespace+"/"+key.name] = podGroupSets(&state.podGroupStateData)
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
