//go:build !kcache_has_get_node

package main

import (
	"k8s.io/kubernetes/pkg/scheduler/framework"

	cache "kcache/goadapter/internal/upstreamcache"
)

// getNode: the cache's interface has no GetNode (it entered in v1.36.0).
func getNode(cache.Cache, string) (*framework.NodeInfo, error) {
	return nil, unsupported("get_node")
}
