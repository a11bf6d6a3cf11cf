// Added to upstream's scheduler package at build time (see ../../README.md).
//
// kcache runs one ScheduleOne at a time and synchronously, on a pod it hands
// over rather than one popped from the queue, over the adapter's cache, and
// wants to see what the cycle decided.  scheduleOnePod cannot be called for
// that (it pops nothing but binds on a goroutine and reports nothing), so
// this runs the same steps in its order: frameworkForPod, skipPodSchedule,
// schedulingCycle, then bindingCycle and, on a binding failure,
// handleBindingCycleError.  SchedulePod is wrapped to keep its result.

package scheduler

import (
	"context"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/informers"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	internalcache "kcache/goadapter/internal/upstreamcache"
)

// CycleReport is what one ScheduleOne did, as upstream's own values.
type CycleReport struct {
	// Skipped: no profile (Err says why) or skipPodSchedule said so.
	Skipped bool
	// Decided: SchedulePod ran; Result and Err are what it returned.
	Decided bool
	Result  ScheduleResult
	Err     error
	// Scores are RunScorePlugins' answer, when SchedulePod scored nodes.
	Scores []fwk.NodePluginScores
	// Rejected is each node's non-success Filter status: a successful
	// SchedulePod drops its Diagnosis, so the statuses are kept as they pass.
	Rejected map[string]*fwk.Status
	// Restricted is the absent nodes' status when PreFilter narrowed the
	// nodes, built as findNodesThatFitPod builds it (its Diagnosis is dropped
	// on success); PreFilterPlugins is RunPreFilterPlugins' plugin set.
	Restricted       *fwk.Status
	PreFilterPlugins sets.Set[string]
	// CycleStatus is schedulingCycle's status (assume, Reserve, Permit after a decision).
	CycleStatus *fwk.Status
	// BindAttempted: bindingCycle ran; BindStatus is its status.
	BindAttempted bool
	BindStatus    *fwk.Status
	// NumAllNodes is how many nodes the cycle's snapshot listed.
	NumAllNodes int
	// NextStartNodeIndex is the scheduler's start index after the cycle.
	NextStartNodeIndex int
	// Nominated is the node RunPostFilterPlugins nominated after a fit error
	// ("" for none): DefaultPreemption's choice, its victims being evicted.
	Nominated string
}

// NewForKcache builds a scheduler with New and then points it at cache c,
// the adapter's: New makes a cache of its own, which stays unused.
func NewForKcache(ctx context.Context, client clientset.Interface, informerFactory informers.SharedInformerFactory,
	c internalcache.Cache, registry frameworkruntime.Registry, opts ...Option) (*Scheduler, error) {
	opts = append(opts, WithFrameworkOutOfTreeRegistry(registry))
	sched, err := New(ctx, client, informerFactory, nil, fakeRecorders, opts...)
	if err != nil {
		return nil, err
	}
	sched.kcacheUseCache(c)
	// A failed pod goes back to a queue that kcache does not model.
	sched.FailureHandler = func(context.Context, framework.Framework, *framework.QueuedPodInfo, *fwk.Status, *fwk.NominatingInfo, time.Time) {
	}
	return sched, nil
}

// fakeRecorders records no events: the recorder type changed in v1.36, and
// the fake one is both.
func fakeRecorders[R any](string) R {
	return any(&events.FakeRecorder{}).(R)
}

// recordingFramework is a profile's framework that keeps what RunPreFilterPlugins,
// each node's RunFilterPluginsWithNominatedPods and RunScorePlugins answered.
type recordingFramework struct {
	framework.Framework
	report *CycleReport
	// filters run in parallel
	mu *sync.Mutex
}

func (r recordingFramework) RunPreFilterPlugins(ctx context.Context, state fwk.CycleState, pod *v1.Pod) (*fwk.PreFilterResult, *fwk.Status, sets.Set[string]) {
	result, status, plugins := r.Framework.RunPreFilterPlugins(ctx, state, pod)
	r.report.PreFilterPlugins = plugins
	if status.IsSuccess() && !result.AllNodes() {
		r.report.Restricted = fwk.NewStatus(fwk.UnschedulableAndUnresolvable, fmt.Sprintf("node(s) didn't satisfy plugin(s) %v", sets.List(plugins)))
	}
	return result, status, plugins
}

func (r recordingFramework) RunFilterPluginsWithNominatedPods(ctx context.Context, state fwk.CycleState, pod *v1.Pod, info fwk.NodeInfo) *fwk.Status {
	status := r.Framework.RunFilterPluginsWithNominatedPods(ctx, state, pod, info)
	if !status.IsSuccess() {
		r.mu.Lock()
		r.report.Rejected[info.Node().Name] = status
		r.mu.Unlock()
	}
	return status
}

func (r recordingFramework) RunPostFilterPlugins(ctx context.Context, state fwk.CycleState, pod *v1.Pod, statuses fwk.NodeToStatusReader) (*fwk.PostFilterResult, *fwk.Status) {
	result, status := r.Framework.RunPostFilterPlugins(ctx, state, pod, statuses)
	if status.IsSuccess() && result != nil && result.NominatingInfo != nil {
		r.report.Nominated = result.NominatingInfo.NominatedNodeName
	}
	return result, status
}

func (r recordingFramework) RunScorePlugins(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) ([]fwk.NodePluginScores, *fwk.Status) {
	scores, status := r.Framework.RunScorePlugins(ctx, state, pod, nodes)
	r.report.Scores = scores
	return scores, status
}

// ScheduleOneForKcache is one ScheduleOne of pod, run to its end (binding included).
func (sched *Scheduler) ScheduleOneForKcache(ctx context.Context, pod *v1.Pod) (report CycleReport) {
	defer func() { report.NextStartNodeIndex = *sched.kcacheStartIndex() }()
	logger := klog.FromContext(ctx)
	schedFramework, err := sched.frameworkForPod(pod)
	if err != nil {
		return CycleReport{Skipped: true, Err: err}
	}
	if sched.skipPodSchedule(ctx, schedFramework, pod) {
		return CycleReport{Skipped: true}
	}
	report.Rejected = map[string]*fwk.Status{}
	recording := recordingFramework{Framework: schedFramework, report: &report, mu: &sync.Mutex{}}
	defer sched.recordSchedulePod(&report)()

	// The queue keeps a pod whose affinity terms do not parse (newQueuedPodInfo drops
	// NewPodInfo's error): InterPodAffinity's PreFilter then refuses it with the error.
	podInfo, _ := framework.NewPodInfo(pod)
	queued := &framework.QueuedPodInfo{PodInfo: podInfo}
	start := time.Now()
	state := framework.NewCycleState()
	podsToActivate := framework.NewPodsToActivate()
	state.Write(framework.PodsToActivateKey, podsToActivate)
	result, assumed, status := sched.schedulingCycle(ctx, state, recording, queued, start, podsToActivate)
	report.CycleStatus = status
	if !status.IsSuccess() {
		return report
	}
	logger.V(4).Info("kcache: binding synchronously", "pod", klog.KObj(pod))
	report.BindAttempted = true
	report.BindStatus = sched.bindingCycle(ctx, state, recording, result, assumed, start, podsToActivate)
	if !report.BindStatus.IsSuccess() {
		sched.handleBindingCycleError(ctx, state, recording, assumed, start, result, report.BindStatus)
	}
	return report
}

// decided records what SchedulePod returned, and the snapshot's node count.
func (sched *Scheduler) decided(report *CycleReport, result ScheduleResult, err error) {
	report.Decided, report.Result, report.Err = true, result, err
	if nodes, listErr := sched.nodeInfoSnapshot.NodeInfos().List(); listErr == nil {
		report.NumAllNodes = len(nodes)
	}
}

// SchedulePodForKcache is SchedulePod alone, as schedulingCycle calls it
// (after updating the snapshot), with nothing assumed.
func (sched *Scheduler) SchedulePodForKcache(ctx context.Context, pod *v1.Pod) (report CycleReport) {
	defer func() { report.NextStartNodeIndex = *sched.kcacheStartIndex() }()
	schedFramework, err := sched.frameworkForPod(pod)
	if err != nil {
		return CycleReport{Skipped: true, Err: err}
	}
	if err := sched.Cache.UpdateSnapshot(klog.FromContext(ctx), sched.nodeInfoSnapshot); err != nil {
		return CycleReport{Err: err}
	}
	// The queue keeps a pod whose affinity terms do not parse (newQueuedPodInfo drops
	// NewPodInfo's error): InterPodAffinity's PreFilter then refuses it with the error.
	podInfo, _ := framework.NewPodInfo(pod)
	report.Rejected = map[string]*fwk.Status{}
	recording := recordingFramework{Framework: schedFramework, report: &report, mu: &sync.Mutex{}}
	defer sched.recordSchedulePod(&report)()
	_, _ = sched.callSchedulePod(ctx, recording, framework.NewCycleState(), &framework.QueuedPodInfo{PodInfo: podInfo})
	return report
}

// Snapshot is the scheduler's own snapshot, the one its frameworks list nodes from.
func (sched *Scheduler) Snapshot() *internalcache.Snapshot {
	return sched.nodeInfoSnapshot
}

// SetNextStartNodeIndex moves where the next filter pass starts (kcache
// compares a fresh scheduler with the running one at the same index).
func (sched *Scheduler) SetNextStartNodeIndex(index int) {
	*sched.kcacheStartIndex() = index
}
