//go:build kcache_has_remove_assumed_pod

package main

import "testing"

func TestForgetAndRemoveAssumedPodShareTheirRefusals(t *testing.T) {
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
