//go:build !kcache_has_prebind_preflight_result

package main

import (
	"context"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
)

// PreBindPreFlight: before v1.36 it answers a status alone.  The script's
// PreBind runs only where it is to fail.
func (p scriptPlugin) PreBindPreFlight(context.Context, fwk.CycleState, *v1.Pod, string) *fwk.Status {
	if p.script.failsAt == "pre_bind" {
		return nil
	}
	return fwk.NewStatus(fwk.Skip)
}
