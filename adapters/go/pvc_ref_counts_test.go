//go:build kcache_counts_pvc_references

package main

import (
	"reflect"
	"testing"
)

// pvcSnapshotKeys: a SNAPSHOT-VIEW counts each claim (once per claim here).
func pvcSnapshotKeys(claims ...string) map[string]any {
	counts := map[string]any{}
	for _, claim := range claims {
		counts[claim] = 1.0
	}
	return map[string]any{"used_pvc_ref_counts": counts}
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
