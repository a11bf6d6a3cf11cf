//go:build !kcache_v136 && !kcache_v137

package main

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	cache "kcache/goadapter/internal/upstreamcache"
)

// release is the kcache release profile this build models.
const release = "v1.35"

// clockedCache hands the trace's times to upstream's time-taking internals.
type clockedCache struct {
	cache.ClockedCache
}

func newCache(ttl time.Duration) cacheUnderTest {
	return clockedCache{cache.NewUnstarted(ttl)}
}

func (c clockedCache) finishBinding(logger klog.Logger, pod *v1.Pod, now time.Time) error {
	return c.FinishBindingAt(logger, pod, now)
}

func (c clockedCache) cleanup(logger klog.Logger, now time.Time) error {
	c.CleanupAt(logger, now)
	return nil
}

// removeAssumedPod: RemoveAssumedPod entered the interface in v1.37.0.
func (clockedCache) removeAssumedPod(klog.Logger, *v1.Pod) error {
	return unsupported("remove_assumed_pod")
}

// getNode: GetNode entered the interface in v1.36.0.
func (clockedCache) getNode(string) (*framework.NodeInfo, error) {
	return nil, unsupported("get_node")
}

// PreBindPreFlight: before v1.36 it answers a status alone.  The script's
// PreBind runs only where it is to fail.
func (p scriptPlugin) PreBindPreFlight(context.Context, fwk.CycleState, *v1.Pod, string) *fwk.Status {
	if p.script.failsAt == "pre_bind" {
		return nil
	}
	return fwk.NewStatus(fwk.Skip)
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
