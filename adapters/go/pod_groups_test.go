//go:build kcache_has_pod_groups && !kcache_has_pod_group_objects

package main

import "testing"

// groupSnapshotKeys: a SNAPSHOT-VIEW adds the snapshot's group copies.
var groupSnapshotKeys = map[string]any{"pod_groups": map[string]any{}}

func TestPodGroupMembersWithoutObjects(t *testing.T) {
	got := answers(t,
		`{"op": "init", "release": "`+release+`", "feature_gates": {"GenericWorkload": true}}`,
		`{"op": "get_pod_group_state", "namespace": "default", "name": "g"}`,
		`{"op": "get_pod_group", "namespace": "default", "name": "g"}`,
	)
	refusals := []struct{ class, message string }{
		{"PodGroupNotFoundError", "pod group state not found for pod group default/g"},
		{"UnsupportedOperation", "get_pod_group does not exist in release " + release},
	}
	for i, want := range refusals {
		refusal, _ := got[i+1]["error"].(map[string]any)
		if refusal["class"] != want.class || refusal["message"] != want.message {
			t.Errorf("answer %d = %v, want %s %q", i+1, got[i+1], want.class, want.message)
		}
	}
}
