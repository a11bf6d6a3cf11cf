//go:build !kcache_has_remove_assumed_pod

package main

import "testing"

func TestNoRemoveAssumedPodAndTheOldForgetText(t *testing.T) {
	got := answers(t,
		initRequest(),
		oneLine(`{"op": "add_pod", "pod": `+podU1+`}`),
		oneLine(`{"op": "remove_assumed_pod", "pod": `+podU1+`}`),
		oneLine(`{"op": "forget_pod", "pod": `+podU1+`}`),
	)
	want := []struct{ class, message string }{
		{"UnsupportedOperation", "remove_assumed_pod does not exist in release " + release},
		{"TransitionError", "pod u1(default/p) wasn't assumed so cannot be forgotten"},
	}
	for i, expected := range want {
		refusal, _ := got[i+2]["error"].(map[string]any)
		if refusal["class"] != expected.class || refusal["message"] != expected.message {
			t.Errorf("answer %d = %v, want %s %q", i+2, got[i+2], expected.class, expected.message)
		}
	}
}
