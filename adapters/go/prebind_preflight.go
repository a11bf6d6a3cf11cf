//go:build kcache_has_prebind_preflight_result

package main

import (
	"context"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
)

// PreBindPreFlight: from v1.36 it answers a result too.  The script's
// PreBind runs only where it is to fail.
func (p scriptPlugin) PreBindPreFlight(context.Context, fwk.CycleState, *v1.Pod, string) (*fwk.PreBindPreFlightResult, *fwk.Status) {
	if p.script.failsAt == "pre_bind" {
		return nil, nil
	}
	return nil, fwk.NewStatus(fwk.Skip)
}
