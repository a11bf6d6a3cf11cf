//go:build !kcache_has_expiry

package main

import (
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	cache "kcache/goadapter/internal/upstreamcache"
)

// expiryless is a cache without assumed-pod expiry: upstream removed it and
// its TTL (v1.36).
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
