//go:build kcache_has_pod_groups && !kcache_has_pod_group_objects

// Added to upstream's cache package at build time (see ../README.md).
//
// Without expiry (v1.36) New still starts a metrics loop.  The adapter
// builds the cache without it so that nothing runs between requests.

package cache

import (
	"context"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/kubernetes/pkg/features"
)

// NewUnstarted builds a cache like New, minus the background metrics loop,
// with the GenericWorkload (pod group) flag taken from its gate as
// kube-scheduler does (off by default).
func NewUnstarted() Cache {
	return newCache(context.Background(), updateMetricsPeriod, nil,
		utilfeature.DefaultFeatureGate.Enabled(features.GenericWorkload))
}
