// Added to upstream's cache package at build time (see ../README.md).
//
// The adapter reports what a Snapshot holds; upstream keeps its name -> NodeInfo
// map and PVC set unexported, so these read-only accessors expose them.

package cache

import (
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// NodeInfoMap is the snapshot's name -> NodeInfo map (nodeInfoMap).
func (s *Snapshot) NodeInfoMap() map[string]*framework.NodeInfo {
	return s.nodeInfoMap
}

// UsedPVCs is the snapshot's set of "namespace/name" claim keys (usedPVCSet).
func (s *Snapshot) UsedPVCs() sets.Set[string] {
	return s.usedPVCSet
}
