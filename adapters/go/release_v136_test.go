//go:build kcache_v136

package main

import "testing"

// groupSnapshotKeys: a v1.36 SNAPSHOT-VIEW adds the snapshot's group copies.
var groupSnapshotKeys = map[string]any{"pod_groups": map[string]any{}}

func TestV136HasNoRemoveAssumedPodAndKeepsTheOldForgetText(t *testing.T) {
	got := answers(t,
		initRequest(),
		oneLine(`{"op": "add_pod", "pod": `+podU1+`}`),
		oneLine(`{"op": "remove_assumed_pod", "pod": `+podU1+`}`),
		oneLine(`{"op": "forget_pod", "pod": `+podU1+`}`),
	)
	want := []struct{ class, message string }{
		{"UnsupportedOperation", "remove_assumed_pod does not exist in release v1.36"},
		{"TransitionError", "pod u1(default/p) wasn't assumed so cannot be forgotten"},
	}
	for i, expected := range want {
		refusal, _ := got[i+2]["error"].(map[string]any)
		if refusal["class"] != expected.class || refusal["message"] != expected.message {
			t.Errorf("answer %d = %v, want %s %q", i+2, got[i+2], expected.class, expected.message)
		}
	}
}

func TestV136HasPodGroupMembersButNoObjects(t *testing.T) {
	got := answers(t,
		`{"op": "init", "release": "v1.36", "feature_gates": {"GenericWorkload": true}}`,
		`{"op": "get_pod_group_state", "namespace": "default", "name": "g"}`,
		`{"op": "get_pod_group", "namespace": "default", "name": "g"}`,
	)
	refusals := []struct{ class, message string }{
		{"PodGroupNotFoundError", "pod group state not found for pod group default/g"},
		{"UnsupportedOperation", "get_pod_group does not exist in release v1.36"},
	}
	for i, want := range refusals {
		refusal, _ := got[i+1]["error"].(map[string]any)
		if refusal["class"] != want.class || refusal["message"] != want.message {
			t.Errorf("answer %d = %v, want %s %q", i+1, got[i+1], want.class, want.message)
		}
	}
}
