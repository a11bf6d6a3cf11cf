package main

import (
	"sort"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	cache "kcache/goadapter/internal/upstreamcache"
)

// nodeView is docs/trace-format.md's NODE-VIEW with every key present: the keys of
// every release here, the non-host-scoped list where the release has it.
type nodeView struct {
	HasNode                      bool                 `json:"has_node"`
	Pods                         []string             `json:"pods"`
	Requested                    map[string]int64     `json:"requested"`
	NonZeroRequested             map[string]int64     `json:"non_zero_requested"`
	Allocatable                  map[string]int64     `json:"allocatable"`
	UsedPorts                    [][3]any             `json:"used_ports"`
	PodsWithAffinity             []string             `json:"pods_with_affinity"`
	PodsWithRequiredAntiAffinity []string             `json:"pods_with_required_anti_affinity"`
	PVCRefCounts                 map[string]int       `json:"pvc_ref_counts"`
	ImageStates                  map[string]imageView `json:"image_states"`
	nonHostScopedNodeView
}

type imageView struct {
	Size     int64 `json:"size"`
	NumNodes int   `json:"num_nodes"`
}

// snapshotView is docs/trace-format.md's SNAPSHOT-VIEW with every key present: the
// used claims as the release keeps them (pvcSnapshotView), the non-host-scoped
// list where it has one, its pod-group copies in groupSnapshotView and
// compositeSnapshotView.
type snapshotView struct {
	NodeList                         []string            `json:"node_list"`
	HavePodsWithAffinity             []string            `json:"have_pods_with_affinity"`
	HavePodsWithRequiredAntiAffinity []string            `json:"have_pods_with_required_anti_affinity"`
	Nodes                            map[string]nodeView `json:"nodes"`
	pvcSnapshotView
	nonHostScopedSnapshotView
	groupSnapshotView
	compositeSnapshotView
}

func viewNode(info *framework.NodeInfo) nodeView {
	pvcs := make(map[string]int, len(info.PVCRefCounts))
	for key, count := range info.PVCRefCounts {
		pvcs[key] = count
	}
	images := make(map[string]imageView, len(info.ImageStates))
	for name, state := range info.ImageStates {
		images[name] = imageView{Size: state.Size, NumNodes: state.NumNodes}
	}
	return nodeView{
		HasNode:                      info.Node() != nil,
		Pods:                         podUIDs(info.Pods),
		Requested:                    amounts(info.Requested),
		NonZeroRequested:             amounts(info.NonZeroRequested),
		Allocatable:                  amounts(info.Allocatable),
		UsedPorts:                    hostPorts(info.UsedPorts),
		PodsWithAffinity:             podUIDs(info.PodsWithAffinity),
		PodsWithRequiredAntiAffinity: podUIDs(info.PodsWithRequiredAntiAffinity),
		PVCRefCounts:                 pvcs,
		ImageStates:                  images,
		nonHostScopedNodeView:        viewNonHostScopedNode(info),
	}
}

// viewSnapshot reads the snapshot's own map and lists, not the cache's.
func viewSnapshot(snapshot *cache.Snapshot) snapshotView {
	nodeList, _ := snapshot.List()
	withAffinity, _ := snapshot.HavePodsWithAffinityList()
	withAntiAffinity, _ := snapshot.HavePodsWithRequiredAntiAffinityList()
	nodes := make(map[string]nodeView, len(snapshot.NodeInfoMap()))
	for name, info := range snapshot.NodeInfoMap() {
		nodes[name] = viewNode(info)
	}
	return snapshotView{
		NodeList:                         nodeNames(nodeList),
		HavePodsWithAffinity:             nodeNames(withAffinity),
		HavePodsWithRequiredAntiAffinity: nodeNames(withAntiAffinity),
		Nodes:                            nodes,
		pvcSnapshotView:                  viewPVCSnapshot(snapshot),
		nonHostScopedSnapshotView:        viewNonHostScopedSnapshot(snapshot),
		groupSnapshotView:                viewGroupSnapshot(snapshot),
		compositeSnapshotView:            viewCompositeSnapshot(snapshot),
	}
}

// resourceKeys names a Resource's fields by docs/trace-format.md's keys.
var resourceKeys = []struct {
	key    string
	amount func(*framework.Resource) int64
}{
	{string(v1.ResourceCPU), func(r *framework.Resource) int64 { return r.MilliCPU }},
	{string(v1.ResourceMemory), func(r *framework.Resource) int64 { return r.Memory }},
	{string(v1.ResourceEphemeralStorage), func(r *framework.Resource) int64 { return r.EphemeralStorage }},
	{string(v1.ResourcePods), func(r *framework.Resource) int64 { return int64(r.AllowedPodNumber) }},
}

// amounts lists a Resource by name, leaving out zero amounts as views do.
func amounts(resource *framework.Resource) map[string]int64 {
	result := map[string]int64{}
	if resource == nil {
		return result
	}
	for _, field := range resourceKeys {
		if amount := field.amount(resource); amount != 0 {
			result[field.key] = amount
		}
	}
	for name, amount := range resource.ScalarResources {
		if amount != 0 {
			result[string(name)] = amount
		}
	}
	return result
}

func podUIDs(pods []fwk.PodInfo) []string {
	uids := make([]string, 0, len(pods))
	for _, pod := range pods {
		uids = append(uids, string(pod.GetPod().UID))
	}
	return uids
}

func nodeNames(infos []fwk.NodeInfo) []string {
	names := make([]string, 0, len(infos))
	for _, info := range infos {
		names = append(names, info.Node().Name)
	}
	return names
}

// hostPorts flattens HostPortInfo into sorted [ip, protocol, port] triples.
func hostPorts(ports fwk.HostPortInfo) [][3]any {
	type triple struct {
		ip, protocol string
		port         int32
	}
	var flat []triple
	for ip, pairs := range ports {
		for pair := range pairs {
			flat = append(flat, triple{ip, pair.Protocol, pair.Port})
		}
	}
	sort.Slice(flat, func(i, j int) bool {
		a, b := flat[i], flat[j]
		if a.ip != b.ip {
			return a.ip < b.ip
		}
		if a.protocol != b.protocol {
			return a.protocol < b.protocol
		}
		return a.port < b.port
	})
	result := make([][3]any, 0, len(flat))
	for _, t := range flat {
		result = append(result, [3]any{t.ip, t.protocol, t.port})
	}
	return result
}
