package main

import (
	"reflect"
	"testing"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/kubernetes/pkg/features"
)

// fitOnly is a profile of NodeResourcesFit alone, filtering one node at a time.
const fitOnly = `{"op": "new_scheduler", "scheduler": "c1", "claims": [], "config": {"parallelism": 1,
	"percentageOfNodesToScore": 0, "profiles": [{"schedulerName": "default-scheduler",
	"plugins": {"multiPoint": {"disabled": [{"name": "*"}], "enabled": [{"name": "NodeResourcesFit", "weight": 1}]}}}]}}`

const (
	bigNode = `{"op": "add_node", "node": {"metadata": {"name": "big"}, "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}}`
	// busy has 4 CPUs, 3 of them taken by a bound pod: a 2-CPU pod would fit
	// once that pod left (Unschedulable, not UnschedulableAndUnresolvable)
	busyNode = `{"op": "add_node", "node": {"metadata": {"name": "busy"}, "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}}`
	busyPod  = `{"op": "add_pod", "pod": {"metadata": {"name": "q", "namespace": "default", "uid": "u0"},
		"spec": {"nodeName": "busy", "containers": [{"name": "c", "resources": {"requests": {"cpu": "3"}}}]}}}`
	twoCPUPod = `{"metadata": {"name": "p", "namespace": "default", "uid": "u1"},
		"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "2"}}}]}}`
)

func scheduleOne(binding string) string {
	return oneLine(`{"op": "schedule_one", "scheduler": "c1", "next_start_node_index": 0, "now": "1",
		"binding": ` + binding + `, "pod": ` + twoCPUPod + `}`)
}

func decision(t *testing.T, answer map[string]any) map[string]any {
	t.Helper()
	if answer["ok"] != true {
		t.Fatalf("schedule_one answered %v", answer)
	}
	return answer["decision"].(map[string]any)
}

func TestScheduleOneIsUpstreamsCycle(t *testing.T) {
	got := answers(t, initRequest(), oneLine(fitOnly), busyNode, oneLine(busyPod), bigNode, scheduleOne(`"success"`),
		oneLine(`{"op": "is_assumed_pod", "pod": `+twoCPUPod+`}`))
	d := decision(t, got[5])
	if d["outcome"] != "scheduled" || d["host"] != "big" || d["bound"] != true {
		t.Fatalf("decision = %v, want scheduled on big and bound", d)
	}
	rejected := map[string]any{"busy": map[string]any{
		"code": "Unschedulable", "reasons": []any{"Insufficient cpu"}, "plugin": "NodeResourcesFit"}}
	if !reflect.DeepEqual(d["node_status"], rejected) {
		t.Errorf("node_status = %v, want %v", d["node_status"], rejected)
	}
	if d["evaluated_nodes"] != float64(2) || d["feasible_nodes"] != float64(1) || d["num_all_nodes"] != float64(2) {
		t.Errorf("counts = %v/%v of %v, want 2 evaluated, 1 feasible of 2", d["evaluated_nodes"], d["feasible_nodes"], d["num_all_nodes"])
	}
	if got[6]["assumed"] != true {
		t.Errorf("after a bound cycle the pod is not assumed: %v", got[6])
	}
}

func TestAScriptedFailureForgetsThePod(t *testing.T) {
	for _, point := range []string{"reserve", "permit", "pre_bind", "bind"} {
		t.Run(point, func(t *testing.T) {
			got := answers(t, initRequest(), oneLine(fitOnly), bigNode,
				scheduleOne(`{"fails_at": "`+point+`", "message": "refused"}`),
				oneLine(`{"op": "dump"}`))
			d := decision(t, got[3])
			if d["outcome"] != "scheduled" || d["bound"] != false || d["message"] != "refused" {
				t.Errorf("decision = %v, want scheduled, not bound, the script's message", d)
			}
			if assumed := got[4]["assumed"]; !reflect.DeepEqual(assumed, []any{}) {
				t.Errorf("assumed after a failed binding = %v, want none", assumed)
			}
		})
	}
}

func TestNoNodesIsUnschedulable(t *testing.T) {
	got := answers(t, initRequest(), oneLine(fitOnly), scheduleOne(`"success"`))
	d := decision(t, got[2])
	if d["outcome"] != "unschedulable" || d["message"] != "no nodes available to schedule pods" {
		t.Errorf("decision = %v, want unschedulable: no nodes available", d)
	}
}

func TestACycleNeedsItsScheduler(t *testing.T) {
	got := answers(t, initRequest(), scheduleOne(`"success"`))
	if _, ok := got[1]["protocol_error"]; !ok {
		t.Errorf("schedule_one without new_scheduler answered %v, want a protocol_error", got[1])
	}
}

func TestInitTurnsOpportunisticBatchingOff(t *testing.T) {
	answers(t, initRequest())
	if utilfeature.DefaultFeatureGate.Enabled(features.OpportunisticBatching) {
		t.Errorf("OpportunisticBatching is on after init; kcache models the cycle without it")
	}
}
