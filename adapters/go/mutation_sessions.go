//go:build kcache_has_mutation_sessions

package main

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	cache "kcache/goadapter/internal/upstreamcache"
)

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

// snapshotAddPod and snapshotRemovePod are the snapshot's own AddPod and
// RemovePod (v1.37), which preemption uses inside a mutation session; the node
// is named by the request, not by the pod.
func (s *session) snapshotAddPod(r request) (map[string]any, error) {
	snapshot, pod, err := s.snapshotAndPod(r)
	if err != nil {
		return nil, err
	}
	nodeName, err := r.str("node_name")
	if err != nil {
		return nil, err
	}
	podInfo, err := framework.NewPodInfo(pod)
	if err != nil {
		return nil, err
	}
	return nil, snapshot.AddPod(podInfo, nodeName)
}

func (s *session) snapshotRemovePod(r request) (map[string]any, error) {
	snapshot, pod, err := s.snapshotAndPod(r)
	if err != nil {
		return nil, err
	}
	nodeName, err := r.str("node_name")
	if err != nil {
		return nil, err
	}
	return nil, snapshot.RemovePod(s.logger, pod, nodeName)
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
