//go:build kcache_has_pod_group_objects

package main

import (
	"reflect"
	"strings"
	"testing"
)

// groupSnapshotKeys: a SNAPSHOT-VIEW adds its group and composite copies.
var groupSnapshotKeys = map[string]any{
	"pod_groups": map[string]any{}, "composite_pod_groups": map[string]any{},
}

func TestInvalidGateCombinationsAreRefusedAndForgotten(t *testing.T) {
	got := answers(t,
		`{"op": "init", "feature_gates": {"CompositePodGroup": true}}`,
		`{"op": "init", "feature_gates": {"NodeDeclaredFeatures": false}}`,
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

func TestPodGroupsAnswerAsUpstreamWithGenericWorkloadOn(t *testing.T) {
	member := oneLine(`{"metadata": {"name": "a", "namespace": "default", "uid": "a"},
		"spec": {"schedulingGroup": {"podGroupName": "g"}}}`)
	got := answers(t,
		`{"op": "init", "release": "`+release+`", "feature_gates": {"GenericWorkload": true}}`,
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
