//go:build kcache_v136

package main

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
)

// release is the kcache release profile this build models.
const release = "v1.36"

// removeAssumedPod: RemoveAssumedPod entered the interface in v1.37.0.
func (expiryless) removeAssumedPod(klog.Logger, *v1.Pod) error {
	return unsupported("remove_assumed_pod")
}

// startMutations and endMutations: mutation sessions arrived in v1.37.
func (*session) startMutations(request) (map[string]any, error) {
	return nil, unsupported("start_mutations")
}

func (*session) endMutations(request) (map[string]any, error) {
	return nil, unsupported("end_mutations")
}

// snapshotAssumePod and snapshotForgetPod: the snapshot's own AssumePod and
// ForgetPod with their recorded list positions arrived in v1.37.
func (*session) snapshotAssumePod(request) (map[string]any, error) {
	return nil, unsupported("snapshot_assume_pod")
}

func (*session) snapshotForgetPod(request) (map[string]any, error) {
	return nil, unsupported("snapshot_forget_pod")
}
