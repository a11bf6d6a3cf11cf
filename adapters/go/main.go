// Command goadapter drives upstream's kube-scheduler cache for kcache.
//
// It speaks the adapter protocol of docs/adapter-protocol.md: a handshake
// line, then one JSON request line in and one JSON response line out, until
// `quit` or the end of standard input.  Logs go to standard error.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"

	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
)

// protocolVersion is the version of docs/adapter-protocol.md spoken here.
const protocolVersion = 1

// release is the kcache release profile this build models: kcache.targets.go
// sets it (-ldflags -X main.release=NAME) beside the build tags that choose
// the files of the release's behaviours (kcache_<flag>, spec/releases.py).
var release = "(unnamed: build through kcache.targets.go)"

func main() {
	prepareUpstream()
	if err := serve(os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "goadapter:", err)
		os.Exit(1)
	}
}

// prepareUpstream sets up what upstream's package expects of a scheduler process.
func prepareUpstream() {
	// cleanupAssumedPods updates cache-size gauges; they exist only once
	// the scheduler's metrics are initialised.
	metrics.InitMetrics()
	// Upstream ends the process on a corrupted cache; here that becomes a
	// panic that the step's recover turns into the protocol's fatal answer.
	klog.OsExit = func(code int) { panic(upstreamExit{code: code}) }
}

// serve runs the protocol until quit or end of input.
func serve(in io.Reader, out, logs io.Writer) error {
	reader := bufio.NewReader(in)
	writer := bufio.NewWriter(out)
	encoder := json.NewEncoder(writer)
	encoder.SetEscapeHTML(false)
	send := func(message any) error {
		if err := encoder.Encode(message); err != nil {
			return err
		}
		return writer.Flush()
	}

	if err := send(handshake()); err != nil {
		return err
	}
	session := newSession(logs)
	for {
		line, err := reader.ReadBytes('\n')
		if errors.Is(err, io.EOF) && len(line) == 0 {
			return nil
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		answer, quit := session.handle(line)
		if quit {
			return nil
		}
		if err := send(answer); err != nil {
			return err
		}
	}
}

// handshake is the first line: protocol version, upstream version, release,
// the ops it handles and the optional requests it takes.
func handshake() map[string]any {
	return map[string]any{
		"kcache_adapter": protocolVersion,
		"name":           "upstream k8s.io/kubernetes " + upstreamVersion(),
		"releases":       []string{release},
		"ops":            handledOps(),
		"batch":          true,
		"sequence":       true,
		"unchanged":      true,
		"scheduler":      true,
	}
}

// handledOps lists the ops of operations, init aside: what kcache may ask once
// the cache is built. An op the modelled release lacks is still handled: it
// answers UnsupportedOperation, as the protocol says.
func handledOps() []string {
	ops := make([]string, 0, len(operations))
	for op := range operations {
		if op != "init" {
			ops = append(ops, op)
		}
	}
	slices.Sort(ops)
	return ops
}

// upstreamVersion is the k8s.io/kubernetes version linked into this binary.
func upstreamVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == "k8s.io/kubernetes" {
				return dep.Version
			}
		}
	}
	return "(unknown version)"
}
