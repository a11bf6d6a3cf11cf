package main

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"reflect"
	"strings"
	"testing"
)

func TestMain(m *testing.M) {
	prepareUpstream()
	os.Exit(m.Run())
}

// converse runs the adapter over request lines and returns the handshake and
// the answers, decoded.
func converse(t *testing.T, requests ...string) (map[string]any, []map[string]any) {
	t.Helper()
	var out, logs bytes.Buffer
	input := strings.NewReader(strings.Join(requests, "\n") + "\n")
	if err := serve(input, &out, &logs); err != nil {
		t.Fatalf("serve: %v", err)
	}
	var lines []map[string]any
	for _, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		var decoded map[string]any
		if err := json.Unmarshal([]byte(line), &decoded); err != nil {
			t.Fatalf("answer %q is not one JSON object: %v", line, err)
		}
		lines = append(lines, decoded)
	}
	return lines[0], lines[1:]
}

// answers is converse without the handshake, requiring one answer per request
// up to the first quit.
func answers(t *testing.T, requests ...string) []map[string]any {
	t.Helper()
	_, got := converse(t, requests...)
	return got
}

func initRequest() string {
	return `{"op": "init", "ttl_seconds": 10, "release": "` + release + `"}`
}

const (
	nodeN1 = `{"metadata": {"name": "n1", "labels": {"topology.kubernetes.io/zone": "a"}},
		"status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
		"images": [{"names": ["nginx:1"], "sizeBytes": 500}]}}`
	podU1 = `{"metadata": {"name": "p", "namespace": "default", "uid": "u1"},
		"spec": {"nodeName": "n1", "containers": [{"name": "c",
		"ports": [{"containerPort": 80, "hostPort": 8080}, {"containerPort": 81, "hostPort": 53, "protocol": "UDP"}],
		"resources": {"requests": {"cpu": "500m", "memory": "256Mi", "example.com/gpu": 1}}}],
		"volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": "claim"}}]}}`
	podU1OnN2 = `{"metadata": {"name": "p", "namespace": "default", "uid": "u1"}, "spec": {"nodeName": "n2"}}`
)

// oneLine keeps request literals readable: the protocol wants one line each.
func oneLine(request string) string {
	return strings.Join(strings.Fields(request), " ")
}

func TestHandshakeListsEveryHandledOpButInit(t *testing.T) {
	handshake, _ := converse(t)
	listed := map[string]bool{}
	for _, op := range handshake["ops"].([]any) {
		listed[op.(string)] = true
	}
	for op := range operations {
		if listed[op] == (op == "init") {
			t.Errorf("ops lists %q: %v, want %v", op, listed[op], op != "init")
		}
	}
	for _, op := range []string{"add_node", "get_node", "get_root_key_for_group", "schedule_one"} {
		if !listed[op] {
			t.Errorf("ops does not list %q", op)
		}
	}
	if len(listed) != len(operations)-1 {
		t.Errorf("ops lists %d ops, want the %d of operations but init", len(listed), len(operations)-1)
	}
}

func TestHandshakeNamesTheReleaseAndTheLinkedUpstream(t *testing.T) {
	handshake, _ := converse(t)
	if handshake["kcache_adapter"] != float64(protocolVersion) {
		t.Errorf("kcache_adapter = %v, want %d", handshake["kcache_adapter"], protocolVersion)
	}
	if got := handshake["releases"]; !reflect.DeepEqual(got, []any{release}) {
		t.Errorf("releases = %v, want [%s]", got, release)
	}
	// go test builds without module versions for the main module, but the
	// dependency's version is recorded.
	if name, _ := handshake["name"].(string); !strings.HasPrefix(name, "upstream k8s.io/kubernetes v1.3") {
		t.Errorf("name = %q, want the linked k8s.io/kubernetes version", name)
	}
}

func TestRequestsBeforeInitAndUnparsableOnesAreProtocolErrors(t *testing.T) {
	got := answers(t,
		`{"op": "dump"}`,
		`not json`,
		`{"op": "frobnicate"}`,
		`{"op": "init", "release": "v0.1"}`,
		initRequest(),
		`{"op": "assume_pod"}`,
		`{"op": "assume_pod", "pod": {"metadata": {"uid": "x"}, "spec": {"containers": [{"resources": {"requests": {"cpu": "lots"}}}]}}}`,
	)
	want := []string{
		"dump: no cache; send init first",
		"request is not one JSON object",
		`unknown op "frobnicate"`,
		`init: release "v0.1" is not modelled`,
		"",
		`assume_pod: missing "pod"`,
		`assume_pod: "pod": quantities must match`,
	}
	for i, fragment := range want {
		message, _ := got[i]["protocol_error"].(string)
		if fragment == "" {
			if got[i]["ok"] != true {
				t.Errorf("answer %d = %v, want ok", i, got[i])
			}
			continue
		}
		if !strings.Contains(message, fragment) || got[i]["ok"] != false {
			t.Errorf("answer %d = %v, want a protocol_error containing %q", i, got[i], fragment)
		}
	}
}

func TestQuitEndsWithoutAnAnswer(t *testing.T) {
	got := answers(t, initRequest(), `{"op": "quit"}`, `{"op": "dump"}`)
	if len(got) != 1 {
		t.Errorf("answers = %v, want only init's", got)
	}
}

func TestRefusalsCarryUpstreamTextAndItsClass(t *testing.T) {
	got := answers(t,
		initRequest(),
		oneLine(`{"op": "assume_pod", "pod": `+podU1+`}`),
		oneLine(`{"op": "assume_pod", "pod": `+podU1+`}`),
		`{"op": "get_pod", "pod": {"metadata": {"uid": "u9", "name": "q", "namespace": "ns"}}}`,
		`{"op": "remove_node", "node": {"metadata": {"name": "n9"}}}`,
		`{"op": "is_assumed_pod", "pod": {"metadata": {"name": "q"}}}`,
		`{"op": "update_pod", "old": {"metadata": {"uid": "u9", "name": "q"}}, "new": {"metadata": {"uid": "u9", "name": "q"}}}`,
	)
	want := []struct{ class, message string }{
		{"TransitionError", "pod u1(default/p) is in the cache, so can't be assumed"},
		{"PodNotFoundError", "pod u9(ns/q) does not exist in scheduler cache"},
		{"NodeNotFoundError", "node n9 is not found"},
		{"EmptyUIDError", "cannot get cache key for pod with empty UID"},
		{"TransitionError", "pod u9(q) is not added to scheduler cache, so cannot be updated"},
	}
	for i, expected := range want {
		answer := got[i+2]
		refusal, _ := answer["error"].(map[string]any)
		if answer["ok"] != false || refusal["class"] != expected.class || refusal["message"] != expected.message {
			t.Errorf("answer %d = %v, want %s %q", i+2, answer, expected.class, expected.message)
		}
	}
}

func TestGetPodAnswersTheCachedPodWhole(t *testing.T) {
	got := answers(t,
		initRequest(),
		oneLine(`{"op": "add_pod", "pod": `+podU1+`}`),
		`{"op": "get_pod", "pod": {"metadata": {"uid": "u1", "name": "p", "namespace": "default"}, "spec": {"nodeName": "n1"}}}`,
	)
	answer := got[2]
	pod, _ := answer["pod"].(map[string]any)
	spec, _ := pod["spec"].(map[string]any)
	containers, _ := spec["containers"].([]any)
	if answer["ok"] != true || answer["node"] != "n1" || len(containers) != 1 {
		t.Fatalf("get_pod answered %v, want the added pod with its one container", answer)
	}
	requests := containers[0].(map[string]any)["resources"].(map[string]any)["requests"]
	want := map[string]any{"cpu": "500m", "memory": "256Mi", "example.com/gpu": "1"}
	if !reflect.DeepEqual(requests, want) {
		t.Errorf("cached pod's requests = %v, want %v", requests, want)
	}
}

func TestUpdatePodOntoAnotherNodeIsFatalAndEndsTheCache(t *testing.T) {
	got := answers(t,
		initRequest(),
		oneLine(`{"op": "add_pod", "pod": `+podU1+`}`),
		oneLine(`{"op": "update_pod", "old": `+podU1+`, "new": `+podU1OnN2+`}`),
		`{"op": "dump"}`,
		initRequest(),
		`{"op": "dump"}`,
	)
	fatal, _ := got[2]["fatal"].(string)
	if got[2]["ok"] != false || !strings.HasPrefix(fatal, "Pod updated on a different node than previously added to.") {
		t.Errorf("update_pod answered %v, want fatal with upstream's logged reason", got[2])
	}
	if message, _ := got[3]["protocol_error"].(string); !strings.Contains(message, "send init first") {
		t.Errorf("after fatal, dump answered %v, want a demand for init", got[3])
	}
	if got[5]["ok"] != true || got[5]["pod_count"] != float64(0) {
		t.Errorf("after a new init, dump answered %v, want an empty cache", got[5])
	}
}

func TestAGoPanicInsideUpstreamIsFatal(t *testing.T) {
	// UpdateNode(nil, n) of a known node whose zone changes dereferences
	// the nil old node in the node tree.
	ghostMaker := `{"op": "add_pod", "pod": {"metadata": {"uid": "u1", "name": "p"}, "spec": {"nodeName": "n1"}}}`
	got := answers(t,
		initRequest(),
		ghostMaker,
		oneLine(`{"op": "update_node", "old": null, "new": `+nodeN1+`}`),
	)
	fatal, _ := got[2]["fatal"].(string)
	if got[2]["ok"] != false || !strings.HasPrefix(fatal, "panic: runtime error") {
		t.Errorf("update_node answered %v, want a fatal naming the panic", got[2])
	}
}

func TestDumpAndSnapshotViewsUseFormatKeys(t *testing.T) {
	got := answers(t,
		initRequest(),
		oneLine(`{"op": "add_node", "node": `+nodeN1+`}`),
		oneLine(`{"op": "assume_pod", "pod": `+podU1+`}`),
		`{"op": "update_snapshot", "snapshot": "s"}`,
		`{"op": "dump"}`,
		`{"op": "view_snapshot", "snapshot": "s"}`,
		`{"op": "view_snapshot", "snapshot": "never-used"}`,
	)
	wantNode := map[string]any{
		"has_node":                         true,
		"pods":                             []any{"u1"},
		"requested":                        map[string]any{"cpu": 500.0, "memory": 268435456.0, "example.com/gpu": 1.0},
		"non_zero_requested":               map[string]any{"cpu": 500.0, "memory": 268435456.0},
		"allocatable":                      map[string]any{"cpu": 4000.0, "memory": 8589934592.0, "pods": 110.0},
		"used_ports":                       []any{[]any{"0.0.0.0", "TCP", 8080.0}, []any{"0.0.0.0", "UDP", 53.0}},
		"pods_with_affinity":               []any{},
		"pods_with_required_anti_affinity": []any{},
		"pvc_ref_counts":                   map[string]any{"default/claim": 1.0},
		"image_states":                     map[string]any{"nginx:1": map[string]any{"size": 500.0, "num_nodes": 1.0}},
	}
	maps.Copy(wantNode, nonHostScopedNodeKeys)
	dump := got[4]
	if dump["node_count"] != 1.0 || dump["pod_count"] != 1.0 || !reflect.DeepEqual(dump["assumed"], []any{"u1"}) {
		t.Errorf("dump counts = %v", dump)
	}
	if nodes, _ := dump["nodes"].(map[string]any); !reflect.DeepEqual(nodes["n1"], wantNode) {
		t.Errorf("dump n1 = %v\nwant        %v", nodes["n1"], wantNode)
	}
	wantSnapshot := map[string]any{
		"node_list":                             []any{"n1"},
		"have_pods_with_affinity":               []any{},
		"have_pods_with_required_anti_affinity": []any{},
		"nodes":                                 map[string]any{"n1": wantNode},
	}
	maps.Copy(wantSnapshot, pvcSnapshotKeys("default/claim"))
	maps.Copy(wantSnapshot, nonHostScopedSnapshotKeys)
	maps.Copy(wantSnapshot, groupSnapshotKeys)
	if !reflect.DeepEqual(got[5]["snapshot"], wantSnapshot) {
		t.Errorf("snapshot s = %v\nwant         %v", got[5]["snapshot"], wantSnapshot)
	}
	empty := map[string]any{
		"node_list": []any{}, "have_pods_with_affinity": []any{},
		"have_pods_with_required_anti_affinity": []any{}, "nodes": map[string]any{},
	}
	maps.Copy(empty, pvcSnapshotKeys())
	maps.Copy(empty, nonHostScopedSnapshotKeys)
	maps.Copy(empty, groupSnapshotKeys)
	if !reflect.DeepEqual(got[6]["snapshot"], empty) {
		t.Errorf("unknown snapshot = %v, want an empty one", got[6]["snapshot"])
	}
}

func TestTimesAreExactNanoseconds(t *testing.T) {
	for text, want := range map[string]int64{
		`12.5`: 12_500_000_000, `"12.5"`: 12_500_000_000, `"0.000000001"`: 1, `1e3`: 1_000_000_000_000, `"-2"`: -2_000_000_000,
	} {
		r := request{op: "cleanup", fields: map[string]json.RawMessage{"now": json.RawMessage(text)}}
		if got, err := r.nanoseconds("now"); err != nil || got != want {
			t.Errorf("now %s = %d, %v; want %d", text, got, err, want)
		}
	}
	for _, text := range []string{`"1e-10"`, `"0x10"`, `"1/3"`, `"NaN"`, `"1e99999"`, `true`, `"9999999999999"`} {
		r := request{op: "cleanup", fields: map[string]json.RawMessage{"now": json.RawMessage(text)}}
		if _, err := r.nanoseconds("now"); err == nil {
			t.Errorf("now %s was accepted", text)
		}
	}
}

func TestFeatureGatesTheReleaseLacksAreProtocolErrors(t *testing.T) {
	got := answers(t,
		`{"op": "init", "feature_gates": {"NoSuchGate": true}}`,
		`{"op": "dump"}`,
		`{"op": "init", "feature_gates": {"GenericWorkload": "yes"}}`,
		`{"op": "init", "feature_gates": {"GenericWorkload": false}}`,
	)
	want := []string{
		`init: feature_gates: release ` + release + ` has no feature gate ["NoSuchGate"]`,
		"dump: no cache; send init first",
		`init: "feature_gates": json: cannot unmarshal`,
	}
	for i, fragment := range want {
		if message, _ := got[i]["protocol_error"].(string); !strings.Contains(message, fragment) {
			t.Errorf("answer %d = %v, want a protocol_error containing %q", i, got[i], fragment)
		}
	}
	if got[3]["ok"] != true {
		t.Errorf("init with a known gate answered %v, want ok", got[3])
	}
}

func TestBatchAnswersEachReadAsIfAlone(t *testing.T) {
	reads := []string{
		`{"op": "dump"}`,
		oneLine(`{"op": "get_pod", "pod": ` + podU1 + `}`),
		oneLine(`{"op": "is_assumed_pod", "pod": ` + podU1 + `}`),
		`{"op": "get_pod", "pod": {"metadata": {"name": "q", "uid": "u9"}, "spec": {}}}`,
		`{"op": "view_snapshot", "snapshot": "s1"}`,
	}
	setup := []string{initRequest(), oneLine(`{"op": "add_node", "node": ` + nodeN1 + `}`),
		oneLine(`{"op": "assume_pod", "pod": ` + podU1 + `}`), `{"op": "update_snapshot", "snapshot": "s1"}`}
	alone := answers(t, append(setup, reads...)...)[len(setup):]
	batched := answers(t, append(setup, `{"op": "batch", "requests": [`+strings.Join(reads, ", ")+`]}`)...)
	got := batched[len(setup)]
	want := requireAnswersAlone(t, "batch", got, alone)
	if pod, _ := want[3].(map[string]any); pod["ok"] != false {
		t.Errorf("get_pod of an unknown pod = %v, want its error", pod)
	}
}

func TestBatchRefusesAnythingButReads(t *testing.T) {
	got := answers(t, initRequest(),
		oneLine(`{"op": "batch", "requests": [{"op": "add_node", "node": `+nodeN1+`}, {"op": "dump"}]}`),
		`{"op": "dump"}`)
	inner, _ := got[1]["answers"].([]any)
	if len(inner) != 2 {
		t.Fatalf("batch answers = %v, want two", got[1])
	}
	refused, _ := inner[0].(map[string]any)
	if message, _ := refused["protocol_error"].(string); !strings.Contains(message, `"add_node" is not a read`) {
		t.Errorf("add_node in a batch = %v, want a protocol error", refused)
	}
	if nodes, _ := got[2]["nodes"].(map[string]any); len(nodes) != 0 {
		t.Errorf("the refused add_node ran: dump = %v", got[2])
	}
}

func TestSequenceAnswersEachRequestAsIfAloneUntilAFatalOne(t *testing.T) {
	steps := []string{
		oneLine(`{"op": "add_node", "node": ` + nodeN1 + `}`),
		oneLine(`{"op": "assume_pod", "pod": ` + podU1 + `}`),
		oneLine(`{"op": "assume_pod", "pod": ` + podU1 + `}`),
		`{"op": "dump"}`,
		`{"op": "is_assumed_pod", "pod": {"metadata": {"name": "p", "namespace": "default", "uid": "u1"}}}`,
		`{"op": "update_snapshot", "snapshot": "s1"}`,
		`{"op": "view_snapshot", "snapshot": "s1"}`,
	}
	alone := answers(t, append([]string{initRequest()}, steps...)...)[1:]
	got := answers(t, initRequest(), `{"op": "sequence", "requests": [`+strings.Join(steps, ", ")+`]}`)[1]
	want := requireAnswersAlone(t, "sequence", got, alone)
	if refused, _ := want[2].(map[string]any); refused["ok"] != false {
		t.Errorf("the second assume_pod = %v, want its error", refused)
	}

	fatal := answers(t, initRequest(), oneLine(`{"op": "sequence", "requests": [{"op": "add_pod", "pod": `+podU1+
		`}, {"op": "update_pod", "old": `+podU1+`, "new": `+podU1OnN2+`}, {"op": "dump"}]}`), `{"op": "dump"}`)
	inner, _ := fatal[1]["answers"].([]any)
	if len(inner) != 2 {
		t.Fatalf("sequence answers = %v, want two: the add and the fatal update, not the dump", fatal[1])
	}
	if last, _ := inner[1].(map[string]any); last["fatal"] == nil {
		t.Errorf("update_pod in a sequence = %v, want fatal", last)
	}
	if message, _ := fatal[2]["protocol_error"].(string); !strings.Contains(message, "send init first") {
		t.Errorf("after a fatal sequence, dump answered %v, want a demand for init", fatal[2])
	}
}

func TestSequenceRefusesTheSessionsOwnRequests(t *testing.T) {
	got := answers(t, initRequest(),
		oneLine(`{"op": "sequence", "requests": [{"op": "add_node", "node": `+nodeN1+`}, {"op": "init"}, {"op": "batch", "requests": []}, {"op": "dump"}]}`))
	inner, _ := got[1]["answers"].([]any)
	if len(inner) != 4 {
		t.Fatalf("sequence answers = %v, want four", got[1])
	}
	for i, op := range []string{"init", "batch"} {
		refused, _ := inner[i+1].(map[string]any)
		if message, _ := refused["protocol_error"].(string); !strings.Contains(message, `"`+op+`" is not a cache request`) {
			t.Errorf("%s in a sequence = %v, want a protocol error", op, refused)
		}
	}
	if dump, _ := inner[3].(map[string]any); dump["node_count"] != float64(1) {
		t.Errorf("dump after the refusals = %v, want the node added before them", dump)
	}
}

func TestReadsAnsweredTheSameBeforeAnswerUnchangedWhenAsked(t *testing.T) {
	reads := `{"op": "dump"}, {"op": "view_snapshot", "snapshot": "s1"}`
	asked := `{"op": "batch", "requests": [` + reads + `], "unchanged": true}`
	changed := oneLine(`{"op": "sequence", "requests": [{"op": "add_node", "node": ` + nodeN1 + `}, ` + reads + `], "unchanged": true}`)
	got := answers(t, initRequest(), asked, asked, changed, changed, initRequest(), asked,
		`{"op": "batch", "requests": [`+reads+`]}`)
	unchanged := map[string]any{"ok": true, "unchanged": true}
	inner := func(i int) []any {
		list, _ := got[i]["answers"].([]any)
		return list
	}
	first := inner(1)
	if len(first) != 2 || reflect.DeepEqual(first[0], unchanged) {
		t.Fatalf("first batch answers = %v, want the answers whole", first)
	}
	if again := inner(2); !reflect.DeepEqual(again, []any{unchanged, unchanged}) {
		t.Errorf("the same batch again = %v, want both unchanged", again)
	}
	added := inner(3)
	if dump, _ := added[1].(map[string]any); dump["node_count"] != float64(1) || !reflect.DeepEqual(added[2], unchanged) {
		t.Errorf("after add_node = %v, want the new dump whole and the snapshot unchanged", added)
	}
	if same := inner(4); !reflect.DeepEqual(same[1:], []any{unchanged, unchanged}) {
		t.Errorf("a second add_node of the same node = %v, want the reads unchanged", same)
	}
	if afterInit := inner(6); !reflect.DeepEqual(afterInit, first) {
		t.Errorf("after init = %v, want the answers whole again: %v", afterInit, first)
	}
	if plain := inner(7); !reflect.DeepEqual(plain, first) {
		t.Errorf("a batch not asking for unchanged = %v, want the answers whole: %v", plain, first)
	}
}

// requireAnswersAlone fails the test unless a batch or sequence answer is ok and answers
// each of its requests as `alone`, the answers to them sent one by one; it returns those.
func requireAnswersAlone(t *testing.T, kind string, got map[string]any, alone []map[string]any) []any {
	t.Helper()
	if got["ok"] != true {
		t.Fatalf("%s answer = %v, want ok", kind, got)
	}
	want := make([]any, len(alone))
	for i, answer := range alone {
		want[i] = answer
	}
	if !reflect.DeepEqual(got["answers"], want) {
		t.Errorf("%s answers = %v\nwant the answers alone: %v", kind, got["answers"], want)
	}
	return want
}
