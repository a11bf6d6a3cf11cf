package main

import (
	"os"
	"runtime/debug"
)

// cacheGCPercent is the collector's setting while the adapter answers
// requests of the cache (everything but a scheduler's).  Each read allocates
// its decoded request and its answer's encoding while the live heap stays at
// a few MiB, so at Go's default (GOGC=100) the collector ran every 20 or so
// requests of a conform run and took a fifth of the adapter's CPU; at 400 it
// runs a quarter as often, for about 15 MiB more memory (docs/performance.md).
// A scheduler's requests (schedulerOps) run at Go's default as upstream's
// scheduler does, so the cycle CPU the adapter reports (kcache simulate) is
// taken at upstream's setting.  A GOGC in the environment is kept throughout.
const cacheGCPercent = 400

// schedulerOps are the requests that build or run upstream's scheduler.
var schedulerOps = map[string]bool{"new_scheduler": true, "schedule_one": true, "schedule_pod": true}

// gcPercentFromEnvironment says whether GOGC was given: then it is kept.
var _, gcPercentFromEnvironment = os.LookupEnv("GOGC")

// gcSetting puts the collector at cacheGCPercent for a request of the cache,
// and back at its previous setting for a scheduler's, when not there already.
type gcSetting struct {
	relaxed  bool
	previous int
}

func (g *gcSetting) setFor(op string) {
	relaxed := !schedulerOps[op]
	if relaxed == g.relaxed || gcPercentFromEnvironment {
		return
	}
	g.relaxed = relaxed
	if relaxed {
		g.previous = debug.SetGCPercent(cacheGCPercent)
	} else {
		debug.SetGCPercent(g.previous)
	}
}
