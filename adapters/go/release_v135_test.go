//go:build !kcache_v136 && !kcache_v137

package main

import "testing"

// groupSnapshotKeys: a v1.35 SNAPSHOT-VIEW has no pod-group keys.
var groupSnapshotKeys = map[string]any{}

func TestAssumedPodExpiresOnlyStrictlyAfterItsDeadline(t *testing.T) {
	pod := oneLine(podU1)
	isAssumed := `{"op": "is_assumed_pod", "pod": ` + pod + `}`
	got := answers(t,
		initRequest(), // ttl 10 s
		`{"op": "assume_pod", "pod": `+pod+`}`,
		`{"op": "cleanup", "now": 100}`,
		isAssumed,
		`{"op": "finish_binding", "pod": `+pod+`, "now": "0.5"}`,
		`{"op": "cleanup", "now": "10.5"}`,
		isAssumed,
		`{"op": "cleanup", "now": "10.500000001"}`,
		isAssumed,
		`{"op": "forget_pod", "pod": `+pod+`}`,
	)
	for i, want := range map[int]bool{3: true, 6: true, 8: false} {
		if got[i]["assumed"] != want {
			t.Errorf("answer %d = %v, want assumed %v", i, got[i], want)
		}
	}
	// v1.35 forgets a pod it no longer holds without complaint.
	if got[9]["ok"] != true {
		t.Errorf("forget_pod of the expired pod answered %v, want ok", got[9])
	}
}

func TestOpsOfLaterReleasesAreUnsupported(t *testing.T) {
	got := answers(t,
		initRequest(),
		`{"op": "get_node", "name": "n1"}`,
		`{"op": "remove_assumed_pod", "pod": `+oneLine(podU1)+`}`,
	)
	for i, op := range map[int]string{1: "get_node", 2: "remove_assumed_pod"} {
		refusal, _ := got[i]["error"].(map[string]any)
		if refusal["class"] != "UnsupportedOperation" || refusal["message"] != op+" does not exist in release v1.35" {
			t.Errorf("%s answered %v, want UnsupportedOperation", op, got[i])
		}
	}
}
