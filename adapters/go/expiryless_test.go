//go:build !kcache_has_expiry

package main

import "testing"

func TestExpiryOperationsAreUnsupported(t *testing.T) {
	got := answers(t,
		initRequest(),
		`{"op": "finish_binding", "pod": `+oneLine(podU1)+`, "now": 1}`,
		`{"op": "cleanup", "now": 1}`,
	)
	for i, op := range map[int]string{1: "finish_binding", 2: "cleanup"} {
		refusal, _ := got[i]["error"].(map[string]any)
		if refusal["class"] != "UnsupportedOperation" || refusal["message"] != op+" does not exist in release "+release {
			t.Errorf("%s answered %v, want UnsupportedOperation", op, got[i])
		}
	}
}
