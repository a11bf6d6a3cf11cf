//go:build kcache_has_get_node

package main

import (
	"reflect"
	"testing"
)

func TestGetNodeAnswersEveryNodeInfoTheCacheHolds(t *testing.T) {
	got := answers(t,
		initRequest(),
		oneLine(`{"op": "add_node", "node": `+nodeN1+`}`),
		oneLine(`{"op": "add_pod", "pod": `+podU1+`}`),
		oneLine(`{"op": "remove_node", "node": `+nodeN1+`}`),
		`{"op": "get_node", "name": "n1"}`,
		`{"op": "get_node", "name": "n2"}`,
		`{"op": "get_node"}`,
	)
	// The removed node stays as a ghost while it holds a pod: GetNode finds it.
	view, _ := got[4]["node"].(map[string]any)
	if got[4]["ok"] != true || view["has_node"] != false || !reflect.DeepEqual(view["pods"], []any{"u1"}) {
		t.Errorf("get_node of the ghost answered %v, want its NODE-VIEW without a node", got[4])
	}
	refusal, _ := got[5]["error"].(map[string]any)
	if refusal["class"] != "NodeNotFoundError" || refusal["message"] != "node n2 does not exist in scheduler cache" {
		t.Errorf("get_node of an unknown node answered %v, want NodeNotFoundError", got[5])
	}
	if got[6]["protocol_error"] != `get_node: missing "name"` {
		t.Errorf("get_node without a name answered %v, want a protocol_error", got[6])
	}
}
