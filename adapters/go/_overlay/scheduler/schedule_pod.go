//go:build !kcache_schedule_pod_takes_pod_info

// Added to upstream's scheduler package at build time (see ../../README.md).
//
// Up to v1.35 SchedulePod takes the pod itself.

package scheduler

import (
	"context"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// recordSchedulePod makes SchedulePod record into report, until the returned restore.
func (sched *Scheduler) recordSchedulePod(report *CycleReport) (restore func()) {
	decide := sched.SchedulePod
	sched.SchedulePod = func(ctx context.Context, f framework.Framework, state fwk.CycleState, pod *v1.Pod) (ScheduleResult, error) {
		result, err := decide(ctx, f, state, pod)
		sched.decided(report, result, err)
		return result, err
	}
	return func() { sched.SchedulePod = decide }
}

func (sched *Scheduler) callSchedulePod(ctx context.Context, f framework.Framework, state fwk.CycleState, podInfo *framework.QueuedPodInfo) (ScheduleResult, error) {
	return sched.SchedulePod(ctx, f, state, podInfo.Pod)
}
