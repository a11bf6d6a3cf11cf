//go:build !kcache_has_scheduling_algorithm

// Added to upstream's scheduler package at build time (see ../../README.md).
//
// Up to v1.37 the Scheduler itself runs the cycle over sched.Cache and keeps
// the filter pass's start index.

package scheduler

import internalcache "kcache/goadapter/internal/upstreamcache"

func (sched *Scheduler) kcacheUseCache(c internalcache.Cache) { sched.Cache = c }

func (sched *Scheduler) kcacheStartIndex() *int { return &sched.nextStartNodeIndex }
