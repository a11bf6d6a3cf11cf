package main

import (
	"fmt"
	"sort"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
)

// opportunisticBatching is the gate every init turns off unless it names it.
const opportunisticBatching = "OpportunisticBatching"

// gateSettings sets upstream's feature gates for each init.  The gates are
// process-wide and upstream reads them inside the cache (the v1.37 NodeInfo
// list, pod requests, the snapshot's copies), so a new cache must not inherit
// an earlier trace's choice: every gate some init set goes back to the
// release's default unless the new init sets it too.
type gateSettings struct {
	// touched names every gate an earlier init set, successfully or not
	// (upstream keeps a refused value too, to be overridden later).
	touched map[string]bool
}

// apply sets the requested gates and resets every other touched gate.
func (g *gateSettings) apply(requested map[string]bool) error {
	known := utilfeature.DefaultMutableFeatureGate.GetAll()
	var unknown []string
	for name := range requested {
		if _, ok := known[featuregate.Feature(name)]; !ok {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return fmt.Errorf("release %s has no feature gate %q", release, unknown)
	}
	settings := map[string]bool{}
	for name := range g.touched {
		settings[name] = known[featuregate.Feature(name)].Default
	}
	if g.touched == nil {
		g.touched = map[string]bool{}
	}
	for name, enabled := range requested {
		settings[name] = enabled
		g.touched[name] = true
	}
	if len(settings) == 0 {
		return nil
	}
	return utilfeature.DefaultMutableFeatureGate.SetFromMap(settings)
}
