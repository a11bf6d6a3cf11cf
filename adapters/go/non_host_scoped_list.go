//go:build kcache_has_non_host_scoped_list

package main

import (
	"k8s.io/kubernetes/pkg/scheduler/framework"

	cache "kcache/goadapter/internal/upstreamcache"
)

// nonHostScopedNodeView: NodeInfos keep a third affinity list (filled only
// while InterPodAffinityHostnameFastPath is on).
type nonHostScopedNodeView struct {
	PodsWithRequiredNonHostScopedAntiAffinity []string `json:"pods_with_required_non_host_scoped_anti_affinity"`
}

func viewNonHostScopedNode(info *framework.NodeInfo) nonHostScopedNodeView {
	return nonHostScopedNodeView{podUIDs(info.PodsWithRequiredNonHostScopedAntiAffinity)}
}

// nonHostScopedSnapshotView: the snapshot lists the nodes of that list.
type nonHostScopedSnapshotView struct {
	HavePodsWithRequiredNonHostScopedAntiAffinity []string `json:"have_pods_with_required_non_host_scoped_anti_affinity"`
}

func viewNonHostScopedSnapshot(snapshot *cache.Snapshot) nonHostScopedSnapshotView {
	withNonHostScoped, _ := snapshot.HavePodsWithRequiredNonHostScopedAntiAffinityList()
	return nonHostScopedSnapshotView{nodeNames(withNonHostScoped)}
}
