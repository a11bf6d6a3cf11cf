package main

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// validJSON holds values of every shape the cuts meet, spaced and escaped as
// JSON allows; encoding/json is what the cuts must agree with.
var validJSON = []string{
	`{"op":"get_pod","pod":{"metadata":{"uid":"u1","name":"p"}}}`,
	` { "op" : "batch" , "requests" : [ {"op":"dump"} , { "op" : "get_node", "name":"n]}\"1" } ] , "unchanged" : true } `,
	"{\t\"a\"\n:\r1,\"b\":-2.5e3,\"c\":null,\"d\":false,\"e\":[],\"f\":{}}",
	`{"k\u0065y":1,"key":2,"\u00e9t\u00e9":3,"é":4,"a\\b":"\\","x":"{[\"]}"}`,
	`{"twice":1,"twice":[2],"twice":{"three":3}}`,
	`[1,"two",[3,[4]],{"five":5},null,true,false,-6.0E-2,"\u005d"]`,
	`[]`, `{}`, ` [ ] `, "\"a string\"", `12`, `null`, `true`,
}

func TestTheCutsAgreeWithEncodingJSON(t *testing.T) {
	for _, text := range validJSON {
		data := []byte(text)
		var wantMembers map[string]json.RawMessage
		isObject := json.Unmarshal(data, &wantMembers) == nil && wantMembers != nil
		members, ok := jsonMembers(data)
		if ok != isObject || (ok && !reflect.DeepEqual(members, wantMembers)) {
			t.Errorf("jsonMembers(%s) = %q, %v; encoding/json: %q, %v", text, members, ok, wantMembers, isObject)
		}
		var wantElements []json.RawMessage
		isArray := json.Unmarshal(data, &wantElements) == nil && wantElements != nil
		elements, ok := jsonElements(data)
		if ok != isArray || (ok && !reflect.DeepEqual(elements, wantElements)) {
			t.Errorf("jsonElements(%s) = %q, %v; encoding/json: %q, %v", text, elements, ok, wantElements, isArray)
		}
	}
}

func TestABatchWhoseRequestsAreNoListIsStillNamed(t *testing.T) {
	got := answers(t,
		initRequest(),
		`{"op": "batch", "requests": {"op": "dump"}}`,
		`{"op": "batch"}`,
		`{"op": "sequence", "requests": [{"op": "dump"}, 7, {"op": "dump"]}`,
	)
	want := []string{ // the start of each: the rest is encoding/json's or the line
		`batch: "requests": json: cannot unmarshal object into Go value of type []`,
		`batch: missing "requests"`,
		`request is not one JSON object: "{\"op\": \"sequence\", \"requests\": [{\"op\": \"dump\"}, 7, {\"op\": \"dump\"]}`,
	}
	for i, message := range want {
		if got, _ := got[i+1]["protocol_error"].(string); !strings.HasPrefix(got, message) {
			t.Errorf("answer %d: protocol_error %q, want it to start %q", i+1, got, message)
		}
	}
}
