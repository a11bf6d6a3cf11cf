package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	cache "kcache/goadapter/internal/upstreamcache"
)

// cacheUnderTest is upstream's Cache plus the operations that take a time
// (unsupported where the release has no expiry: expiry.go, expiryless.go).
type cacheUnderTest interface {
	cache.Cache
	finishBinding(logger klog.Logger, pod *v1.Pod, now time.Time) error
	cleanup(logger klog.Logger, now time.Time) error
}

// session is one adapter process: the current cache and its snapshots.
type session struct {
	// cache is nil before the first init and after a fatal answer.
	cache     cacheUnderTest
	snapshots map[string]*cache.Snapshot
	// schedulers are upstream's schedulers over cache, by name (new_scheduler)
	schedulers map[string]*cycleScheduler
	gates      gateSettings
	log        *stepLog
	logger     klog.Logger
	// answered holds, per read request line, the last answer a batch or
	// sequence asking for "unchanged" gave it, encoded; init forgets them.
	answered map[string][]byte
	// skipFatalReads is set while a sequence asking for "optional_reads" runs.
	skipFatalReads bool
	// gc is the collector's setting, by the kind of the last request
	gc gcSetting
}

func newSession(logs io.Writer) *session {
	log := &stepLog{out: logs}
	return &session{log: log, logger: klog.New(log)}
}

// operation answers one request; reply holds the keys besides "ok".
type operation func(s *session, r request) (reply map[string]any, err error)

// operations maps each protocol op to its handler.
var operations = map[string]operation{
	"init":                (*session).init,
	"add_node":            (*session).addNode,
	"update_node":         (*session).updateNode,
	"remove_node":         (*session).removeNode,
	"assume_pod":          podStep(cacheUnderTest.AssumePod),
	"forget_pod":          podStep(cacheUnderTest.ForgetPod),
	"remove_assumed_pod":  podStep(removeAssumedPod),
	"add_pod":             podStep(cacheUnderTest.AddPod),
	"remove_pod":          podStep(cacheUnderTest.RemovePod),
	"update_pod":          (*session).updatePod,
	"finish_binding":      (*session).finishBinding,
	"cleanup":             (*session).cleanup,
	"update_snapshot":     (*session).updateSnapshot,
	"get_pod":             (*session).getPod,
	"get_node":            (*session).getNode,
	"is_assumed_pod":      (*session).isAssumedPod,
	"dump":                (*session).dump,
	"view_snapshot":       (*session).viewSnapshot,
	"start_mutations":     (*session).startMutations,
	"end_mutations":       (*session).endMutations,
	"snapshot_assume_pod": (*session).snapshotAssumePod,
	"snapshot_forget_pod": (*session).snapshotForgetPod,
	"snapshot_add_pod":    (*session).snapshotAddPod,
	"snapshot_remove_pod": (*session).snapshotRemovePod,
	// pod groups: pod_groups.go and pod_group_objects.go, each with its _absent.go
	"add_pod_group_member":          (*session).addPodGroupMember,
	"update_pod_group_member":       (*session).updatePodGroupMember,
	"remove_pod_group_member":       (*session).removePodGroupMember,
	"add_pod_group":                 (*session).addPodGroup,
	"update_pod_group":              (*session).updatePodGroup,
	"remove_pod_group":              (*session).removePodGroup,
	"add_composite_pod_group":       (*session).addCompositePodGroup,
	"update_composite_pod_group":    (*session).updateCompositePodGroup,
	"remove_composite_pod_group":    (*session).removeCompositePodGroup,
	"get_pod_group_state":           (*session).getPodGroupState,
	"get_pod_group":                 (*session).getPodGroup,
	"get_composite_pod_group_state": (*session).getCompositePodGroupState,
	"get_composite_pod_group":       (*session).getCompositePodGroup,
	"get_root_key_for_group":        (*session).getRootKeyForGroup,
	"pod_groups":                    (*session).podGroups,
	"composite_pod_groups":          (*session).compositePodGroups,
	// the scheduling cycle: scheduling.go
	"new_scheduler": (*session).newScheduler,
	"schedule_one":  (*session).scheduleOne,
	"schedule_pod":  (*session).schedulePod,
}

// handle answers one request line; quit reports the quit op.
func (s *session) handle(line []byte) (answer map[string]any, quit bool) {
	r, err := parseRequest(line)
	if err != nil {
		return failure(err), false
	}
	if r.op == "quit" {
		return nil, true
	}
	s.gc.setFor(r.op)
	if r.op == "batch" {
		return s.batch(r), false
	}
	if r.op == "sequence" {
		return s.sequence(r), false
	}
	return s.answer(r), false
}

// answer runs one parsed request of the cache (not quit, batch or sequence):
// a batch or sequence hands over the requests it parsed, parsed once.
func (s *session) answer(r request) map[string]any {
	run, known := operations[r.op]
	if !known {
		return failure(protocolErrorf("unknown op %q", r.op))
	}
	if s.cache == nil && r.op != "init" {
		return failure(protocolErrorf("%s: no cache; send init first", r.op))
	}
	reply, err := s.guarded(run, r)
	if err != nil {
		if errors.As(err, new(fatalError)) {
			if s.skipFatalReads && reads[r.op] {
				// A read kcache asked ahead of its need changes nothing: skip it,
				// keep the cache, and let kcache ask again when it needs it.
				return map[string]any{"ok": false, "skipped": true}
			}
			// Upstream would be gone; its state may be half-changed.
			s.stopSchedulers()
			s.cache, s.snapshots, s.schedulers, s.answered = nil, nil, nil, nil
		}
		return failure(err)
	}
	answer := map[string]any{"ok": true}
	for key, value := range reply {
		answer[key] = value
	}
	return answer
}

// reads are the ops a batch may carry: none of them changes the cache.
var reads = map[string]bool{
	"get_pod": true, "is_assumed_pod": true, "get_node": true, "dump": true, "view_snapshot": true,
	"get_pod_group_state": true, "get_pod_group": true, "get_composite_pod_group_state": true,
	"get_composite_pod_group": true, "get_root_key_for_group": true, "pod_groups": true,
	"composite_pod_groups": true,
}

// batch answers each read of "requests" as if it had come on its own line.
func (s *session) batch(r request) map[string]any {
	lines, unchanged, err := several(r)
	if err != nil {
		return failure(err)
	}
	answers := make([]any, len(lines))
	for i, line := range lines {
		read, err := parseValidRequest(line)
		switch {
		case err != nil:
			answers[i] = failure(err)
		case !reads[read.op]:
			answers[i] = failure(protocolErrorf("batch: %q is not a read", read.op))
		default:
			answers[i] = s.readAnswer(line, s.answer(read), unchanged)
		}
	}
	return map[string]any{"ok": true, "answers": answers}
}

// several reads what a batch and a sequence share: their request lines, and
// whether a read may answer "unchanged".
func several(r request) ([]json.RawMessage, bool, error) {
	raw, _ := r.present("requests")
	lines, isArray := jsonElements(raw)
	if !isArray { // missing, or not a list: decode names what is wrong
		if err := r.decode("requests", &lines); err != nil {
			return nil, false, err
		}
	}
	unchanged, err := r.flag("unchanged")
	return lines, unchanged, err
}

// readAnswer is the answer to the read request line, or, when unchanged is
// asked for and the answer encodes to the bytes last given to the same line,
// {"ok": true, "unchanged": true}: the client already holds it.
func (s *session) readAnswer(line []byte, answer map[string]any, unchanged bool) any {
	if !unchanged || answer["ok"] != true {
		return answer
	}
	encoded, err := json.Marshal(answer)
	if err != nil {
		return answer
	}
	key := string(line)
	if previous, seen := s.answered[key]; seen && bytes.Equal(previous, encoded) {
		return map[string]any{"ok": true, "unchanged": true}
	}
	if s.answered == nil {
		s.answered = map[string][]byte{}
	}
	s.answered[key] = encoded
	return json.RawMessage(encoded)
}

// sequence answers each request of "requests" in turn as if it had come on
// its own line, changes included, and stops after a fatal answer: the cache
// that gave it is gone.
func (s *session) sequence(r request) map[string]any {
	lines, unchanged, err := several(r)
	if err != nil {
		return failure(err)
	}
	optional, err := r.flag("optional_reads")
	if err != nil {
		return failure(err)
	}
	s.skipFatalReads = optional
	defer func() { s.skipFatalReads = false }()
	answers := make([]any, 0, len(lines))
	for _, line := range lines {
		step, err := parseValidRequest(line)
		var answer map[string]any
		switch {
		case err != nil:
			answer = failure(err)
		case !inSequence(step.op):
			answer = failure(protocolErrorf("sequence: %q is not a cache request", step.op))
		default:
			answer = s.answer(step)
		}
		if _, fatal := answer["fatal"]; fatal {
			return map[string]any{"ok": true, "answers": append(answers, answer)}
		}
		if err == nil && reads[step.op] {
			answers = append(answers, s.readAnswer(line, answer, unchanged))
		} else {
			answers = append(answers, answer)
		}
	}
	return map[string]any{"ok": true, "answers": answers}
}

// inSequence says whether a sequence may carry op: a change of the cache or a
// read, not the session's own requests nor a scheduler's.
func inSequence(op string) bool {
	switch op {
	case "init", "quit", "batch", "sequence", "new_scheduler", "schedule_one", "schedule_pod":
		return false
	}
	_, known := operations[op]
	return known
}

// guarded runs one step, turning upstream's exits and Go panics into fatalError.
func (s *session) guarded(run operation, r request) (reply map[string]any, err error) {
	s.log.startStep()
	defer func() {
		if recovered := recover(); recovered != nil {
			reply, err = nil, fatalFrom(recovered, s.log.stepErrors())
		}
	}()
	return run(s, r)
}

func (s *session) init(r request) (map[string]any, error) {
	wanted, err := r.optionalString("release", release)
	if err != nil {
		return nil, err
	}
	if wanted != release {
		return nil, protocolErrorf("init: release %q is not modelled; this adapter is built for %s", wanted, release)
	}
	ttl, err := r.duration("ttl_seconds")
	if err != nil {
		return nil, err
	}
	gates, err := r.optionalGates("feature_gates")
	if err != nil {
		return nil, err
	}
	// kcache models the scheduling cycle without OpportunisticBatching (on by
	// default from v1.35): its node hints depend on the wall clock.
	if _, set := gates[opportunisticBatching]; !set {
		gates[opportunisticBatching] = false
	}
	// The gates are process-wide: set them before anything reads them.
	s.stopSchedulers()
	s.cache, s.snapshots, s.schedulers = nil, nil, nil
	if err := s.gates.apply(gates); err != nil {
		return nil, protocolErrorf("init: feature_gates: %v", err)
	}
	s.cache = newCache(ttl)
	s.answered = nil
	s.snapshots = map[string]*cache.Snapshot{}
	s.schedulers = map[string]*cycleScheduler{}
	return nil, nil
}

func (s *session) addNode(r request) (map[string]any, error) {
	node, err := r.node("node")
	if err != nil {
		return nil, err
	}
	s.cache.AddNode(s.logger, node)
	return nil, nil
}

func (s *session) updateNode(r request) (map[string]any, error) {
	oldNode, err := r.optionalNode("old")
	if err != nil {
		return nil, err
	}
	newNode, err := r.node("new")
	if err != nil {
		return nil, err
	}
	s.cache.UpdateNode(s.logger, oldNode, newNode)
	return nil, nil
}

func (s *session) removeNode(r request) (map[string]any, error) {
	node, err := r.node("node")
	if err != nil {
		return nil, err
	}
	return nil, s.cache.RemoveNode(s.logger, node)
}

// podStep adapts a cache method of the form Op(logger, pod) error.
func podStep(method func(cacheUnderTest, klog.Logger, *v1.Pod) error) operation {
	return func(s *session, r request) (map[string]any, error) {
		pod, err := r.pod("pod")
		if err != nil {
			return nil, err
		}
		return nil, method(s.cache, s.logger, pod)
	}
}

func (s *session) updatePod(r request) (map[string]any, error) {
	oldPod, err := r.pod("old")
	if err != nil {
		return nil, err
	}
	newPod, err := r.pod("new")
	if err != nil {
		return nil, err
	}
	return nil, s.cache.UpdatePod(s.logger, oldPod, newPod)
}

func (s *session) finishBinding(r request) (map[string]any, error) {
	pod, err := r.pod("pod")
	if err != nil {
		return nil, err
	}
	now, err := r.instant("now")
	if err != nil {
		return nil, err
	}
	return nil, s.cache.finishBinding(s.logger, pod, now)
}

func (s *session) cleanup(r request) (map[string]any, error) {
	now, err := r.instant("now")
	if err != nil {
		return nil, err
	}
	return nil, s.cache.cleanup(s.logger, now)
}

func (s *session) updateSnapshot(r request) (map[string]any, error) {
	snapshot, err := s.snapshot(r)
	if err != nil {
		return nil, err
	}
	return nil, s.cache.UpdateSnapshot(s.logger, snapshot)
}

// snapshot is the snapshot the request names, made empty on its first use.
func (s *session) snapshot(r request) (*cache.Snapshot, error) {
	name, err := r.str("snapshot")
	if err != nil {
		return nil, err
	}
	snapshot, ok := s.snapshots[name]
	if !ok {
		snapshot = cache.NewEmptySnapshot()
		s.snapshots[name] = snapshot
	}
	return snapshot, nil
}

func (s *session) getPod(r request) (map[string]any, error) {
	pod, err := r.pod("pod")
	if err != nil {
		return nil, err
	}
	cached, err := s.cache.GetPod(pod)
	if err != nil {
		return nil, err
	}
	// The whole cached object: upstream returns the version it holds, not the argument.
	return map[string]any{"node": cached.Spec.NodeName, "pod": cached}, nil
}

func (s *session) getNode(r request) (map[string]any, error) {
	name, err := r.str("name")
	if err != nil {
		return nil, err
	}
	info, err := getNode(s.cache, name)
	if err != nil {
		return nil, err
	}
	return map[string]any{"node": viewNode(info)}, nil
}

func (s *session) isAssumedPod(r request) (map[string]any, error) {
	pod, err := r.pod("pod")
	if err != nil {
		return nil, err
	}
	assumed, err := s.cache.IsAssumedPod(pod)
	if err != nil {
		return nil, err
	}
	return map[string]any{"assumed": assumed}, nil
}

func (s *session) dump(request) (map[string]any, error) {
	dump := s.cache.Dump()
	nodes := make(map[string]nodeView, len(dump.Nodes))
	for name, info := range dump.Nodes {
		nodes[name] = viewNode(info)
	}
	assumed := dump.AssumedPods.UnsortedList()
	sort.Strings(assumed)
	podCount, err := s.cache.PodCount()
	if err != nil {
		return nil, err
	}
	return map[string]any{
		"nodes":      nodes,
		"assumed":    assumed,
		"node_count": s.cache.NodeCount(),
		"pod_count":  podCount,
	}, nil
}

func (s *session) viewSnapshot(r request) (map[string]any, error) {
	name, err := r.str("snapshot")
	if err != nil {
		return nil, err
	}
	snapshot, ok := s.snapshots[name]
	if !ok {
		snapshot = cache.NewEmptySnapshot()
	}
	return map[string]any{"snapshot": viewSnapshot(snapshot)}, nil
}
