//go:build kcache_has_expiry

package main

import (
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	cache "kcache/goadapter/internal/upstreamcache"
)

// clockedCache is a cache with assumed-pod expiry: it hands the trace's
// times to upstream's time-taking internals.
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
