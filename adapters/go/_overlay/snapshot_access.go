// Added to upstream's cache package at build time (see ../README.md).
//
// The adapter reports what a Snapshot holds; upstream keeps its name -> NodeInfo
// map unexported, so this read-only accessor exposes it.

package cache

import "k8s.io/kubernetes/pkg/scheduler/framework"

// NodeInfoMap is the snapshot's name -> NodeInfo map (nodeInfoMap).
func (s *Snapshot) NodeInfoMap() map[string]*framework.NodeInfo {
	return s.nodeInfoMap
}
