package main

import (
	"runtime/debug"
	"testing"
)

// gcPercent is the collector's current setting.
func gcPercent() int {
	percent := debug.SetGCPercent(100)
	debug.SetGCPercent(percent)
	return percent
}

func TestTheCacheIsAnsweredWithALaterCollectorAndASchedulerAtTheSettingBefore(t *testing.T) {
	before := gcPercent()
	var setting gcSetting
	relaxed := cacheGCPercent
	if gcPercentFromEnvironment {
		relaxed = before // GOGC given: kept throughout
	}
	for _, step := range []struct {
		op   string
		want int
	}{{"sequence", relaxed}, {"get_node", relaxed}, {"schedule_one", before}, {"new_scheduler", before}, {"batch", relaxed}, {"schedule_pod", before}} {
		setting.setFor(step.op)
		if got := gcPercent(); got != step.want {
			t.Errorf("after %s: GC percent %d, want %d", step.op, got, step.want)
		}
	}
}
