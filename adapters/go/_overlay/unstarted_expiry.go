//go:build kcache_has_expiry

// Added to upstream's cache package at build time (see ../README.md).
//
// kcache's time is virtual: the trace says what "now" is.  Upstream's New
// starts a loop that expires assumed pods by the wall clock, so the adapter
// builds the cache without that loop and hands the trace's times to the two
// internals that already take "now" as an argument.

package cache

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
)

// ClockedCache is Cache with the time-taking internals reachable.
type ClockedCache interface {
	Cache
	// FinishBindingAt is FinishBinding with the clock at now.
	FinishBindingAt(logger klog.Logger, pod *v1.Pod, now time.Time) error
	// CleanupAt is one pass of the expiry loop at now.
	CleanupAt(logger klog.Logger, now time.Time)
}

// NewUnstarted builds a cache like New, minus the background expiry loop.
func NewUnstarted(ttl time.Duration) ClockedCache {
	return newCache(context.Background(), ttl, cleanAssumedPeriod, nil)
}

func (cache *cacheImpl) FinishBindingAt(logger klog.Logger, pod *v1.Pod, now time.Time) error {
	return cache.finishBinding(logger, pod, now)
}

func (cache *cacheImpl) CleanupAt(logger klog.Logger, now time.Time) {
	cache.cleanupAssumedPods(logger, now)
}
