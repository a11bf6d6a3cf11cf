//go:build kcache_has_non_host_scoped_list

package main

import (
	"reflect"
	"testing"
)

// nonHostScopedNodeKeys: a NODE-VIEW adds the non-host-scoped list.
var nonHostScopedNodeKeys = map[string]any{"pods_with_required_non_host_scoped_anti_affinity": []any{}}

// nonHostScopedSnapshotKeys: a SNAPSHOT-VIEW lists the nodes of the non-host-scoped list.
var nonHostScopedSnapshotKeys = map[string]any{"have_pods_with_required_non_host_scoped_anti_affinity": []any{}}

// zoneAntiAffinityPod has a required anti-affinity term scoped to zones.
const zoneAntiAffinityPod = `{"metadata": {"name": "z", "namespace": "default", "uid": "uz"},
	"spec": {"nodeName": "n1", "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
	[{"topologyKey": "kubernetes.io/hostname"}, {"topologyKey": "topology.kubernetes.io/zone"}]}}}}`

func TestNonHostScopedListFollowsTheGateOfEachInit(t *testing.T) {
	steps := []string{
		oneLine(`{"op": "add_node", "node": ` + nodeN1 + `}`),
		oneLine(`{"op": "add_pod", "pod": ` + zoneAntiAffinityPod + `}`),
		`{"op": "update_snapshot", "snapshot": "s"}`,
		`{"op": "view_snapshot", "snapshot": "s"}`,
	}
	gateOn := `{"op": "init", "feature_gates": {"InterPodAffinityHostnameFastPath": true}}`
	requests := append([]string{gateOn}, steps...)
	requests = append(requests, initRequest()) // back to the default: off
	requests = append(requests, steps...)
	got := answers(t, requests...)
	for i, want := range map[int][]any{4: {"uz"}, 9: {}} {
		snapshot, _ := got[i]["snapshot"].(map[string]any)
		node, _ := snapshot["nodes"].(map[string]any)["n1"].(map[string]any)
		nodes := []any{}
		if len(want) > 0 {
			nodes = []any{"n1"}
		}
		if !reflect.DeepEqual(node["pods_with_required_non_host_scoped_anti_affinity"], want) ||
			!reflect.DeepEqual(snapshot["have_pods_with_required_non_host_scoped_anti_affinity"], nodes) {
			t.Errorf("snapshot %d = %v, want the pod listed as %v", i, snapshot, want)
		}
		if !reflect.DeepEqual(node["pods_with_required_anti_affinity"], []any{"uz"}) {
			t.Errorf("snapshot %d lost the pod from the required anti-affinity list: %v", i, node)
		}
	}
}
