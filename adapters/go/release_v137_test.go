//go:build kcache_v137

package main

import (
	"reflect"
	"strings"
	"testing"
)

// releaseNodeKeys: a v1.37 NODE-VIEW adds the non-host-scoped list.
var releaseNodeKeys = map[string]any{"pods_with_required_non_host_scoped_anti_affinity": []any{}}

// groupSnapshotKeys: a v1.37 SNAPSHOT-VIEW adds its group and composite copies.
var groupSnapshotKeys = map[string]any{
	"pod_groups": map[string]any{}, "composite_pod_groups": map[string]any{},
}

// releaseSnapshotKeys: a v1.37 SNAPSHOT-VIEW counts each claim (once per
// claim here) and lists the nodes of the non-host-scoped list.
func releaseSnapshotKeys(claims ...string) map[string]any {
	counts := map[string]any{}
	for _, claim := range claims {
		counts[claim] = 1.0
	}
	return map[string]any{
		"used_pvc_ref_counts": counts,
		"have_pods_with_required_non_host_scoped_anti_affinity": []any{},
	}
}

func TestForgetAndRemoveAssumedPodShareTheV137Refusals(t *testing.T) {
	got := answers(t,
		initRequest(),
		oneLine(`{"op": "add_pod", "pod": `+podU1+`}`),
		oneLine(`{"op": "forget_pod", "pod": `+podU1+`}`),
		oneLine(`{"op": "remove_assumed_pod", "pod": `+podU1+`}`),
		oneLine(`{"op": "remove_assumed_pod", "pod": `+podU1OnN2+`}`),
	)
	want := []string{
		"pod u1(default/p) is not assumed, so it cannot be removed or forgotten",
		"pod u1(default/p) is not assumed, so it cannot be removed or forgotten",
		"pod u1(default/p) was assumed on n2 but assigned to n1",
	}
	for i, message := range want {
		refusal, _ := got[i+2]["error"].(map[string]any)
		if refusal["class"] != "TransitionError" || refusal["message"] != message {
			t.Errorf("answer %d = %v, want TransitionError %q", i+2, got[i+2], message)
		}
	}
}

func TestRemoveAssumedPodTakesTheAssumedPodOffItsNode(t *testing.T) {
	got := answers(t,
		initRequest(),
		oneLine(`{"op": "assume_pod", "pod": `+podU1+`}`),
		oneLine(`{"op": "remove_assumed_pod", "pod": `+podU1+`}`),
		oneLine(`{"op": "is_assumed_pod", "pod": `+podU1+`}`),
		`{"op": "dump"}`,
		oneLine(`{"op": "remove_assumed_pod", "pod": `+podU1+`}`),
	)
	if got[2]["ok"] != true || got[3]["assumed"] != false {
		t.Errorf("remove_assumed_pod answered %v, then is_assumed_pod %v; want ok, not assumed", got[2], got[3])
	}
	// The pod was the node's only holder: the NodeInfo goes with it.
	if got[4]["pod_count"] != 0.0 || got[4]["node_count"] != 0.0 {
		t.Errorf("dump after remove_assumed_pod = %v, want an empty cache", got[4])
	}
	if got[5]["ok"] != true {
		t.Errorf("remove_assumed_pod of a pod the cache no longer holds answered %v, want ok", got[5])
	}
}

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

func TestInvalidGateCombinationsAreRefusedAndForgotten(t *testing.T) {
	got := answers(t,
		`{"op": "init", "feature_gates": {"CompositePodGroup": true}}`,
		`{"op": "init", "feature_gates": {"InPlacePodVerticalScaling": false}}`,
		initRequest(),
	)
	for i, fragment := range []string{"CompositePodGroup is enabled, but depends on", "feature is locked to true"} {
		if message, _ := got[i]["protocol_error"].(string); !strings.Contains(message, fragment) {
			t.Errorf("answer %d = %v, want a protocol_error containing %q", i, got[i], fragment)
		}
	}
	// Upstream keeps a refused value; the next init resets it to the default.
	if got[2]["ok"] != true {
		t.Errorf("init after refused gates answered %v, want ok", got[2])
	}
}

func TestSnapshotCountsClaimReferencesIncrementally(t *testing.T) {
	podWithClaimTwice := `{"metadata": {"name": "q", "namespace": "default", "uid": "u2"}, "spec": {"nodeName": "n1",
		"volumes": [{"name": "a", "persistentVolumeClaim": {"claimName": "claim"}},
		{"name": "b", "persistentVolumeClaim": {"claimName": "claim"}}]}}`
	got := answers(t,
		initRequest(),
		oneLine(`{"op": "add_node", "node": `+nodeN1+`}`),
		oneLine(`{"op": "add_pod", "pod": `+podU1+`}`),
		oneLine(`{"op": "add_pod", "pod": `+podWithClaimTwice+`}`),
		`{"op": "update_snapshot", "snapshot": "s"}`,
		`{"op": "view_snapshot", "snapshot": "s"}`,
		// v1.37 defect kept as upstream has it: RemoveNode subtracts the
		// node's claims from the delta, AddNode adds nothing back, and the
		// node stays in the snapshot, so no full rebuild repairs the counts.
		oneLine(`{"op": "remove_node", "node": `+nodeN1+`}`),
		oneLine(`{"op": "add_node", "node": `+nodeN1+`}`),
		`{"op": "update_snapshot", "snapshot": "s"}`,
		`{"op": "view_snapshot", "snapshot": "s"}`,
		`{"op": "update_snapshot", "snapshot": "fresh"}`,
		`{"op": "view_snapshot", "snapshot": "fresh"}`,
	)
	for i, want := range map[int]map[string]any{5: {"default/claim": 3.0}, 9: {}, 11: {"default/claim": 3.0}} {
		snapshot, _ := got[i]["snapshot"].(map[string]any)
		if !reflect.DeepEqual(snapshot["used_pvc_ref_counts"], want) {
			t.Errorf("answer %d: used_pvc_ref_counts = %v, want %v", i, snapshot["used_pvc_ref_counts"], want)
		}
	}
}

func TestPodGroupsAnswerAsUpstreamWithGenericWorkloadOn(t *testing.T) {
	member := oneLine(`{"metadata": {"name": "a", "namespace": "default", "uid": "a"},
		"spec": {"schedulingGroup": {"podGroupName": "g"}}}`)
	got := answers(t,
		`{"op": "init", "release": "v1.37", "feature_gates": {"GenericWorkload": true}}`,
		`{"op": "add_pod_group_member", "pod": `+member+`}`,
		`{"op": "pod_groups"}`,
		`{"op": "get_pod_group_state", "namespace": "default", "name": "g"}`,
		`{"op": "get_pod_group", "namespace": "default", "name": "g"}`,
		`{"op": "get_composite_pod_group", "namespace": "default", "name": "c"}`,
	)
	unscheduled := map[string]any{
		"all": []any{"a"}, "unscheduled": []any{"a"}, "assumed": []any{}, "assigned": []any{},
		"has_pod_group": false, "unscheduled_pods": []any{"a"},
	}
	groups, _ := got[2]["pod_groups"].(map[string]any)
	if !reflect.DeepEqual(groups, map[string]any{"default/g": unscheduled}) {
		t.Errorf("pod_groups = %v, want default/g unscheduled", got[2])
	}
	if !reflect.DeepEqual(got[3]["pod_group_state"], unscheduled) {
		t.Errorf("get_pod_group_state = %v, want the same sets", got[3])
	}
	refusals := []struct{ class, message string }{
		{"PodGroupNotFoundError", "pod group object not found for pod group podgroup/default/g"},
		{"FeatureGateDisabledError", "composite pod group feature gate is disabled"},
	}
	for i, want := range refusals {
		refusal, _ := got[i+4]["error"].(map[string]any)
		if refusal["class"] != want.class || refusal["message"] != want.message {
			t.Errorf("answer %d = %v, want %s %q", i+4, got[i+4], want.class, want.message)
		}
	}
}
