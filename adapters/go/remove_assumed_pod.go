//go:build kcache_has_remove_assumed_pod

package main

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
)

// removeAssumedPod is upstream's RemoveAssumedPod.
func removeAssumedPod(c cacheUnderTest, logger klog.Logger, pod *v1.Pod) error {
	return c.RemoveAssumedPod(logger, pod)
}
