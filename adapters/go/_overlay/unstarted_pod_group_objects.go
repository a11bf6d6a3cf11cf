//go:build kcache_has_pod_group_objects

// Added to upstream's cache package at build time (see ../README.md).
//
// v1.37's New still starts a metrics loop.  The adapter builds the cache
// without it so that nothing runs between requests, with the two pod-group
// flags taken from the feature gates as kube-scheduler does.

package cache

import (
	"context"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/kubernetes/pkg/features"
)

// NewUnstarted builds a cache like New, minus the background metrics loop.
func NewUnstarted() Cache {
	return newCache(context.Background(), updateMetricsPeriod, nil,
		utilfeature.DefaultFeatureGate.Enabled(features.GenericWorkload),
		utilfeature.DefaultFeatureGate.Enabled(features.CompositePodGroup))
}
