//go:build kcache_v136

package main

import (
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	cache "kcache/goadapter/internal/upstreamcache"
)

// release is the kcache release profile this build models.
const release = "v1.36"

// expiryless is a v1.36 cache: expiry and its TTL were removed upstream.
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
