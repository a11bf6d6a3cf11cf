// Command config_validation reads each KubeSchedulerConfiguration file named
// on its command line as kube-scheduler's --config does (the scheme's
// decoder, which defaults it) and validates it with upstream's own
// ValidateKubeSchedulerConfiguration. It prints one JSON object: file name to
// the error's text, "" for a valid file. tests/go/test_config_errors_go.py
// builds it against a release's pinned modules.
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/validation"
)

func main() {
	found := map[string]string{}
	for _, name := range os.Args[1:] {
		data, err := os.ReadFile(name)
		if err != nil {
			fail(err)
		}
		object, _, err := scheme.Codecs.UniversalDecoder().Decode(data, nil, nil)
		if err != nil {
			fail(fmt.Errorf("%s: %w", name, err))
		}
		found[name] = ""
		if err := validation.ValidateKubeSchedulerConfiguration(object.(*config.KubeSchedulerConfiguration)); err != nil {
			found[name] = err.Error()
		}
	}
	if err := json.NewEncoder(os.Stdout).Encode(found); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}
