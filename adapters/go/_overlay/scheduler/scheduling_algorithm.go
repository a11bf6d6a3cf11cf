//go:build kcache_has_scheduling_algorithm

// Added to upstream's scheduler package at build time (see ../../README.md).
//
// From v1.38 the single-pod cycle (schedulePod, the filter pass, assuming
// and forgetting) belongs to a SchedulingAlgorithm that New builds over the
// cache New made.  The adapter's cache must replace that one too, or the
// cycle would assume into a cache nobody reads; the start index of the
// filter pass lives in the algorithm.

package scheduler

import internalcache "kcache/goadapter/internal/upstreamcache"

func (sched *Scheduler) kcacheUseCache(c internalcache.Cache) {
	sched.Cache = c
	sched.algorithm.cache = c
}

func (sched *Scheduler) kcacheStartIndex() *int { return &sched.algorithm.nextStartNodeIndex }
