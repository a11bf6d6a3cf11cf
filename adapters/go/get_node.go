//go:build kcache_has_get_node

package main

import (
	"k8s.io/kubernetes/pkg/scheduler/framework"

	cache "kcache/goadapter/internal/upstreamcache"
)

// getNode is upstream's GetNode, part of the cache's interface.
func getNode(c cache.Cache, name string) (*framework.NodeInfo, error) {
	return c.GetNode(name)
}
