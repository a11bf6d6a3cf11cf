package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"syscall"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/component-base/featuregate"
	"k8s.io/klog/v2"
	configv1 "k8s.io/kube-scheduler/config/v1"
	fwk "k8s.io/kube-scheduler/framework"
	schedulerapi "k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultbinder"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/queuesort"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	scheduler "kcache/goadapter/internal/upstreamscheduler"
)

// cycleScheduler is upstream's Scheduler over the session's cache, with the
// script of the current cycle's binding.
type cycleScheduler struct {
	sched  *scheduler.Scheduler
	clock  *clockedFinish
	script *bindingScript
	// pods is the pod informer's store: the pending pod is in it during its
	// cycle, as in the API server, where DefaultPreemption reads it back
	pods cache.Store
	// stop ends what New started in the background (its metrics recorder)
	stop context.CancelFunc
	// evicted records the victims of the current cycle's preemption
	evicted *evictions
}

// evictions are the pods whose eviction DefaultPreemption started this cycle,
// as namespace/name: it marks each victim's status with the DisruptionTarget
// condition before deleting it, and that status patch reaches the fake API
// server (which holds no such pod, so upstream goes on as if it were gone).
type evictions struct {
	mu   sync.Mutex
	pods []string
}

func (e *evictions) record(action clienttesting.Action) (bool, runtime.Object, error) {
	if patch, ok := action.(clienttesting.PatchAction); ok && action.GetSubresource() == "status" {
		e.mu.Lock()
		e.pods = append(e.pods, patch.GetNamespace()+"/"+patch.GetName())
		e.mu.Unlock()
	}
	return false, nil, nil
}

// taken returns the pods recorded, sorted, and starts afresh.
func (e *evictions) taken() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	pods := append([]string{}, e.pods...)
	e.pods = nil
	sort.Strings(pods)
	return pods
}

// withSyncPreemption runs build with SchedulerAsyncPreemption off, as the
// plugins New builds read it: DefaultPreemption then evicts its victims
// before PostFilter returns, so a cycle's evictions are all recorded when
// it ends.  The decision (node and victims) is the same either way; the gate
// goes back to what it was.
func withSyncPreemption(build func() error) error {
	const gate = "SchedulerAsyncPreemption"
	was := utilfeature.DefaultFeatureGate.Enabled(featuregate.Feature(gate))
	if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(map[string]bool{gate: false}); err != nil {
		return protocolErrorf("new_scheduler: %v", err)
	}
	defer func() { _ = utilfeature.DefaultMutableFeatureGate.SetFromMap(map[string]bool{gate: was}) }()
	return build()
}

// stopSchedulers ends every scheduler of the session (init discards them).
func (s *session) stopSchedulers() {
	for _, c := range s.schedulers {
		c.stop()
	}
}

// clockedFinish is the session's cache as upstream's scheduler sees it:
// FinishBinding (v1.35 only) takes the cycle's virtual time.
type clockedFinish struct {
	cacheUnderTest
	now time.Time
}

func (c *clockedFinish) FinishBinding(logger klog.Logger, pod *v1.Pod) error {
	return c.finishBinding(logger, pod, c.now)
}

// newScheduler answers `new_scheduler`: upstream's scheduler built from the
// trace's configuration (KubeSchedulerConfiguration v1), with the claims and
// the cluster objects in its informers, over this session's cache.
func (s *session) newScheduler(r request) (map[string]any, error) {
	var versioned configv1.KubeSchedulerConfiguration
	if err := r.decode("config", &versioned); err != nil {
		return nil, err
	}
	// pluginConfig args arrive as raw JSON: decoded into their typed args as
	// kube-scheduler's own --config reading does, so upstream defaults them
	if err := versioned.DecodeNestedObjects(scheme.Codecs.UniversalDeserializer()); err != nil {
		return nil, protocolErrorf("new_scheduler: config: %v", err)
	}
	var claims []v1.PersistentVolumeClaim
	if _, ok := r.present("claims"); ok {
		if err := r.decode("claims", &claims); err != nil {
			return nil, err
		}
	}
	for i := range versioned.Profiles {
		versioned.Profiles[i].Plugins = withCycleEnds(versioned.Profiles[i].Plugins)
	}
	scheme.Scheme.Default(&versioned)
	var config schedulerapi.KubeSchedulerConfiguration
	if err := scheme.Scheme.Convert(&versioned, &config, nil); err != nil {
		return nil, protocolErrorf("new_scheduler: config: %v", err)
	}

	script := &bindingScript{}
	evicted := &evictions{}
	client := fake.NewClientset()
	client.PrependReactor("create", "pods", script.bind)
	client.PrependReactor("patch", "pods", evicted.record)
	factory := informers.NewSharedInformerFactory(client, 0)
	claimStore := factory.Core().V1().PersistentVolumeClaims().Informer().GetStore()
	for i := range claims {
		if err := claimStore.Add(&claims[i]); err != nil {
			return nil, protocolErrorf("new_scheduler: claims[%d]: %v", i, err)
		}
	}
	if err := addClusterObjects(r, factory); err != nil {
		return nil, err
	}
	name, err := r.str("scheduler")
	if err != nil {
		return nil, err
	}
	clock := &clockedFinish{cacheUnderTest: s.cache}
	registry := frameworkruntime.Registry{scriptName: script.plugin}
	ctx, stop := context.WithCancel(klog.NewContext(context.Background(), s.logger))
	var sched *scheduler.Scheduler
	err = withSyncPreemption(func() (err error) {
		sched, err = scheduler.NewForKcache(ctx, client, factory, clock, registry,
			scheduler.WithProfiles(config.Profiles...),
			scheduler.WithParallelism(config.Parallelism),
			scheduler.WithPercentageOfNodesToScore(config.PercentageOfNodesToScore),
		)
		return err
	})
	if err != nil {
		stop()
		return nil, protocolErrorf("new_scheduler: %v", err)
	}
	if old, ok := s.schedulers[name]; ok {
		old.stop()
	}
	pods := factory.Core().V1().Pods().Informer().GetStore()
	s.schedulers[name] = &cycleScheduler{sched: sched, clock: clock, script: script, pods: pods, stop: stop, evicted: evicted}
	// its snapshot is viewed like any other, by name
	s.snapshots[schedulerSnapshot(name)] = sched.Snapshot()
	return map[string]any{"snapshot": schedulerSnapshot(name)}, nil
}

// schedulerSnapshot names a scheduler's snapshot for view_snapshot.
func schedulerSnapshot(scheduler string) string {
	return "scheduler:" + scheduler
}

// cycleOf reads the scheduler a cycle request names and sets its start index.
func (s *session) cycleOf(r request) (*cycleScheduler, *v1.Pod, error) {
	name, err := r.str("scheduler")
	if err != nil {
		return nil, nil, err
	}
	c, ok := s.schedulers[name]
	if !ok {
		return nil, nil, protocolErrorf("%s: no scheduler %q; send new_scheduler first", r.op, name)
	}
	var start int
	if err := r.decode("next_start_node_index", &start); err != nil {
		return nil, nil, err
	}
	pod, err := r.pod("pod")
	if err != nil {
		return nil, nil, err
	}
	if pod.Spec.SchedulerName == "" {
		// the API server's default: a pod reaches the scheduler with it set
		pod.Spec.SchedulerName = v1.DefaultSchedulerName
	}
	c.sched.SetNextStartNodeIndex(start)
	return c, pod, nil
}

// schedulePod answers `schedule_pod`: upstream's SchedulePod alone.
func (s *session) schedulePod(r request) (map[string]any, error) {
	c, pod, err := s.cycleOf(r)
	if err != nil {
		return nil, err
	}
	*c.script = bindingScript{}
	report := c.sched.SchedulePodForKcache(klog.NewContext(context.Background(), s.logger), pod)
	return map[string]any{"decision": decisionOf(pod, report, c.script, nil)}, nil
}

// withCycleEnds adds what every kube-scheduler profile has but the trace's
// plugin list leaves out (its queue sort and binder), and the binding script.
func withCycleEnds(plugins *configv1.Plugins) *configv1.Plugins {
	if plugins == nil {
		plugins = &configv1.Plugins{}
	}
	enabled := map[string]bool{}
	for _, plugin := range plugins.MultiPoint.Enabled {
		enabled[plugin.Name] = true
	}
	for _, name := range []string{queuesort.Name, defaultbinder.Name, scriptName} {
		if !enabled[name] {
			plugins.MultiPoint.Enabled = append(plugins.MultiPoint.Enabled, configv1.Plugin{Name: name})
		}
	}
	return plugins
}

// scheduleOne answers `schedule_one`: upstream's ScheduleOne of the pod,
// binding as the trace scripts it, reported as a DECISION.
func (s *session) scheduleOne(r request) (map[string]any, error) {
	c, pod, err := s.cycleOf(r)
	if err != nil {
		return nil, err
	}
	now, err := r.instant("now")
	if err != nil {
		return nil, err
	}
	script, err := r.binding()
	if err != nil {
		return nil, err
	}
	*c.script = script
	c.clock.now = now
	ctx := klog.NewContext(context.Background(), s.logger)
	if err := c.pods.Add(pod); err != nil {
		return nil, protocolErrorf("%s: pod: %v", r.op, err)
	}
	defer func() { _ = c.pods.Delete(pod) }()
	c.evicted.taken()
	cpuBefore := processCPU()
	started := time.Now()
	report := c.sched.ScheduleOneForKcache(ctx, pod)
	// the cycle's own time, without the pipe and the JSON on either side
	spent := time.Since(started)
	cpu := processCPU() - cpuBefore
	decision := decisionOf(pod, report, c.script, c.evicted.taken())
	return map[string]any{
		"decision": decision, "cycle_ns": spent.Nanoseconds(), "cycle_cpu_ns": cpu.Nanoseconds(),
	}, nil
}

// processCPU is the CPU time the adapter's process has used (user and system, every
// thread, the garbage collector's included): the adapter does nothing else while a
// cycle runs, so the difference around a cycle is the cycle's CPU cost, which a busy
// machine does not inflate as it does the wall-clock time.
func processCPU() time.Duration {
	var usage syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &usage); err != nil {
		return 0
	}
	return time.Duration(usage.Utime.Nano() + usage.Stime.Nano())
}

// binding reads the step's `binding`: "success" or {fails_at, message}.
func (r request) binding() (bindingScript, error) {
	raw, ok := r.present("binding")
	if !ok || string(raw) == `"success"` {
		return bindingScript{}, nil
	}
	var script struct {
		FailsAt string `json:"fails_at"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(raw, &script); err != nil {
		return bindingScript{}, protocolErrorf("%s: %q: %v", r.op, "binding", err)
	}
	switch script.FailsAt {
	case "reserve", "permit", "pre_bind", "bind":
	default:
		return bindingScript{}, protocolErrorf("%s: binding.fails_at: %q is not reserve, permit, pre_bind or bind", r.op, script.FailsAt)
	}
	return bindingScript{failsAt: script.FailsAt, message: script.Message}, nil
}

// statusView is the trace format's STATUS.
type statusView struct {
	Code    string   `json:"code"`
	Reasons []string `json:"reasons"`
	Plugin  string   `json:"plugin"`
}

func viewStatus(status *fwk.Status) statusView {
	reasons := status.Reasons()
	if reasons == nil {
		reasons = []string{}
	}
	return statusView{Code: status.Code().String(), Reasons: reasons, Plugin: status.Plugin()}
}

// decisionOf is the trace format's DECISION for what upstream's cycle did;
// `evicted` are the victims of its preemption, if any.
func decisionOf(pod *v1.Pod, report scheduler.CycleReport, script *bindingScript, evicted []string) map[string]any {
	decision := map[string]any{
		"outcome": "skipped", "host": "", "evaluated_nodes": 0, "feasible_nodes": 0,
		"node_status": map[string]statusView{}, "absent_node_status": nil,
		"unschedulable_plugins": []string{}, "pre_filter_msg": "", "num_all_nodes": 0,
		"plugin_scores": map[string]map[string]int64{}, "message": "", "bound": nil,
		"next_start_node_index": report.NextStartNodeIndex, "nominated": nil,
	}
	if report.Nominated != "" {
		decision["nominated"] = map[string]any{"node": report.Nominated, "victims": evicted}
	}
	switch {
	case report.Skipped:
		if report.Err != nil {
			decision["message"] = report.Err.Error()
		} else if pod.DeletionTimestamp != nil {
			// the text of the event skipPodSchedule records
			decision["message"] = fmt.Sprintf("skip schedule deleting pod: %v/%v", pod.Namespace, pod.Name)
		}
		return decision
	case !report.Decided:
		decision["outcome"] = "error"
		if report.Err != nil {
			decision["message"] = report.Err.Error()
		} else if !report.CycleStatus.IsSuccess() {
			decision["message"] = report.CycleStatus.Message()
		}
		return decision
	case report.Err != nil:
		failed(decision, report.Err)
		return decision
	}
	decision["outcome"] = "scheduled"
	decision["host"] = report.Result.SuggestedHost
	decision["evaluated_nodes"] = report.Result.EvaluatedNodes
	decision["feasible_nodes"] = report.Result.FeasibleNodes
	decision["num_all_nodes"] = report.NumAllNodes
	statuses := map[string]statusView{}
	plugins := setOf(report.PreFilterPlugins.UnsortedList())
	if report.Restricted != nil {
		decision["absent_node_status"] = viewStatus(report.Restricted)
	}
	for name, status := range report.Rejected {
		statuses[name] = viewStatus(status)
		plugins[status.Plugin()] = true
	}
	decision["node_status"] = statuses
	decision["unschedulable_plugins"] = sortedKeys(plugins)
	scores := map[string]map[string]int64{}
	for _, node := range report.Scores {
		byPlugin := map[string]int64{}
		for _, score := range node.Scores {
			byPlugin[score.Name] = score.Score
		}
		scores[node.Name] = byPlugin
	}
	decision["plugin_scores"] = scores
	switch {
	case script.fired:
		decision["bound"] = false
		decision["message"] = script.message
	case !report.CycleStatus.IsSuccess():
		decision["outcome"] = "error"
		decision["message"] = report.CycleStatus.Message()
	case report.BindAttempted && !report.BindStatus.IsSuccess():
		decision["bound"] = false
		decision["message"] = report.BindStatus.Message()
	case report.BindAttempted:
		decision["bound"] = true
	}
	return decision
}

// failed fills in a SchedulePod error: a fit error, no nodes, or another error.
func failed(decision map[string]any, err error) {
	decision["message"] = err.Error()
	var fit *framework.FitError
	if errors.Is(err, scheduler.ErrNoNodesAvailable) {
		decision["outcome"] = "unschedulable"
		return
	}
	if !errors.As(err, &fit) {
		decision["outcome"] = "error"
		return
	}
	decision["outcome"] = "unschedulable"
	decision["num_all_nodes"] = fit.NumAllNodes
	decision["pre_filter_msg"] = fit.Diagnosis.PreFilterMsg
	decision["unschedulable_plugins"] = sortedKeys(setOf(fit.Diagnosis.UnschedulablePlugins.UnsortedList()))
	statuses := map[string]statusView{}
	fit.Diagnosis.NodeToStatus.ForEachExplicitNode(func(name string, status *fwk.Status) {
		statuses[name] = viewStatus(status)
	})
	decision["node_status"] = statuses
	// The default absent status (no reasons) stands for "no node left out".
	if absent := fit.Diagnosis.NodeToStatus.AbsentNodesStatus(); len(absent.Reasons()) > 0 {
		decision["absent_node_status"] = viewStatus(absent)
	}
}

func setOf(names []string) map[string]bool {
	set := map[string]bool{}
	for _, name := range names {
		set[name] = true
	}
	return set
}

func sortedKeys(set map[string]bool) []string {
	keys := make([]string, 0, len(set))
	for key := range set {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	return keys
}

// scriptName is the plugin that fails Reserve, Permit or PreBind when told.
const scriptName = "KcacheBindingScript"

// bindingScript is where the current cycle's binding fails, if anywhere:
// a plugin for the three extension points and the fake API server's answer
// to the Binding, and whether the failure happened.
type bindingScript struct {
	failsAt string
	message string
	fired   bool
}

func (b *bindingScript) plugin(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) {
	return scriptPlugin{b}, nil
}

// fail is the scripted failure at point, or nil.
func (b *bindingScript) fail(point string) *fwk.Status {
	if b.failsAt != point {
		return nil
	}
	b.fired = true
	return fwk.NewStatus(fwk.Error, b.message)
}

// bind answers the fake API server's create of a pods/binding.
func (b *bindingScript) bind(action clienttesting.Action) (bool, runtime.Object, error) {
	if action.GetSubresource() != "binding" {
		return false, nil, nil
	}
	if b.failsAt == "bind" {
		b.fired = true
		return true, nil, errors.New(b.message)
	}
	return true, nil, nil
}

type scriptPlugin struct{ script *bindingScript }

func (scriptPlugin) Name() string { return scriptName }

func (p scriptPlugin) Reserve(context.Context, fwk.CycleState, *v1.Pod, string) *fwk.Status {
	return p.script.fail("reserve")
}

func (scriptPlugin) Unreserve(context.Context, fwk.CycleState, *v1.Pod, string) {}

func (p scriptPlugin) Permit(context.Context, fwk.CycleState, *v1.Pod, string) (*fwk.Status, time.Duration) {
	return p.script.fail("permit"), 0
}

func (p scriptPlugin) PreBind(context.Context, fwk.CycleState, *v1.Pod, string) *fwk.Status {
	return p.script.fail("pre_bind")
}
