//go:build !kcache_has_get_node

package main

import "testing"

func TestGetNodeIsUnsupported(t *testing.T) {
	got := answers(t, initRequest(), `{"op": "get_node", "name": "n1"}`)
	refusal, _ := got[1]["error"].(map[string]any)
	if refusal["class"] != "UnsupportedOperation" || refusal["message"] != "get_node does not exist in release "+release {
		t.Errorf("get_node answered %v, want UnsupportedOperation", got[1])
	}
}
