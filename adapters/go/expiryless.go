//go:build kcache_v136 || kcache_v137

package main

import (
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	cache "kcache/goadapter/internal/upstreamcache"
)

// expiryless is a cache of v1.36 or later: expiry and its TTL were removed
// upstream, and GetNode is part of the interface.
type expiryless struct {
	cache.Cache
}

func newCache(time.Duration) cacheUnderTest {
	return expiryless{cache.NewUnstarted()}
}

func (expiryless) finishBinding(klog.Logger, *v1.Pod, time.Time) error {
	return unsupported("finish_binding")
}

func (expiryless) cleanup(klog.Logger, time.Time) error {
	return unsupported("cleanup")
}

func (c expiryless) getNode(name string) (*framework.NodeInfo, error) {
	return c.GetNode(name)
}
