//go:build kcache_has_expiry

package main

import "testing"

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
	// Forgetting a pod the cache no longer holds succeeds (since v1.35.0).
	if got[9]["ok"] != true {
		t.Errorf("forget_pod of the expired pod answered %v, want ok", got[9])
	}
}
