//go:build kcache_v137

package main

import (
	"maps"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	cache "kcache/goadapter/internal/upstreamcache"
)

// release is the kcache release profile this build models.
const release = "v1.37"

func (c expiryless) removeAssumedPod(logger klog.Logger, pod *v1.Pod) error {
	return c.RemoveAssumedPod(logger, pod)
}

// releaseNodeView: v1.37 NodeInfos keep a third affinity list (filled only
// while InterPodAffinityHostnameFastPath is on).
type releaseNodeView struct {
	PodsWithRequiredNonHostScopedAntiAffinity []string `json:"pods_with_required_non_host_scoped_anti_affinity"`
}

func viewReleaseNode(info *framework.NodeInfo) releaseNodeView {
	return releaseNodeView{podUIDs(info.PodsWithRequiredNonHostScopedAntiAffinity)}
}

// releaseSnapshotView: v1.37 snapshots count claim references instead of
// holding a set, and list the nodes of the third affinity list.
type releaseSnapshotView struct {
	UsedPVCRefCounts                              map[string]int `json:"used_pvc_ref_counts"`
	HavePodsWithRequiredNonHostScopedAntiAffinity []string       `json:"have_pods_with_required_non_host_scoped_anti_affinity"`
}

func viewReleaseSnapshot(snapshot *cache.Snapshot) releaseSnapshotView {
	withNonHostScoped, _ := snapshot.HavePodsWithRequiredNonHostScopedAntiAffinityList()
	counts := map[string]int{}
	maps.Copy(counts, snapshot.UsedPVCRefCounts())
	return releaseSnapshotView{
		UsedPVCRefCounts: counts,
		HavePodsWithRequiredNonHostScopedAntiAffinity: nodeNames(withNonHostScoped),
	}
}

// startMutations and endMutations are the snapshot's own session methods,
// upstream's since v1.37.
func (s *session) startMutations(r request) (map[string]any, error) {
	snapshot, err := s.snapshot(r)
	if err != nil {
		return nil, err
	}
	return nil, snapshot.StartMutations()
}

func (s *session) endMutations(r request) (map[string]any, error) {
	snapshot, err := s.snapshot(r)
	if err != nil {
		return nil, err
	}
	return nil, snapshot.EndMutations()
}

// snapshotAssumePod and snapshotForgetPod are the snapshot's own AssumePod and
// ForgetPod (v1.37), which a pod-group cycle uses to place its members.
func (s *session) snapshotAssumePod(r request) (map[string]any, error) {
	snapshot, pod, err := s.snapshotAndPod(r)
	if err != nil {
		return nil, err
	}
	podInfo, err := framework.NewPodInfo(pod)
	if err != nil {
		return nil, err
	}
	return nil, snapshot.AssumePod(podInfo)
}

func (s *session) snapshotForgetPod(r request) (map[string]any, error) {
	snapshot, pod, err := s.snapshotAndPod(r)
	if err != nil {
		return nil, err
	}
	return nil, snapshot.ForgetPod(s.logger, pod)
}

// snapshotAndPod reads what a snapshot-level assume and forget both take.
func (s *session) snapshotAndPod(r request) (*cache.Snapshot, *v1.Pod, error) {
	snapshot, err := s.snapshot(r)
	if err != nil {
		return nil, nil, err
	}
	pod, err := r.pod("pod")
	return snapshot, pod, err
}
