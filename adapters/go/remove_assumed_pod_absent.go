//go:build !kcache_has_remove_assumed_pod

package main

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
)

// removeAssumedPod: the cache has no RemoveAssumedPod (it entered in v1.37.0).
func removeAssumedPod(cacheUnderTest, klog.Logger, *v1.Pod) error {
	return unsupported("remove_assumed_pod")
}
