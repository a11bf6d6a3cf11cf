package main

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// protocolError is a request the adapter cannot carry out as written.
type protocolError struct{ message string }

func (e protocolError) Error() string { return e.message }

func protocolErrorf(format string, args ...any) error {
	return protocolError{fmt.Sprintf(format, args...)}
}

// unsupportedError is an operation the pinned release does not have.
type unsupportedError struct{ op string }

// Error words it as the spec does; upstream has no text, only no such method.
func (e unsupportedError) Error() string {
	return fmt.Sprintf("%s does not exist in release %s", e.op, release)
}

func unsupported(op string) error { return unsupportedError{op} }

// fatalError is a step where upstream would have ended the process.
type fatalError struct{ message string }

func (e fatalError) Error() string { return e.message }

// upstreamExit is what klog.OsExit panics with instead of exiting.
type upstreamExit struct{ code int }

// fatalFrom names why a step ended fatally: the errors upstream logged right
// before exiting, or the Go panic.
func fatalFrom(recovered any, logged []string) fatalError {
	exit, isExit := recovered.(upstreamExit)
	switch {
	case isExit && len(logged) > 0:
		return fatalError{strings.Join(logged, "; ")}
	case isExit:
		return fatalError{fmt.Sprintf("upstream exited with code %d", exit.code)}
	default:
		return fatalError{fmt.Sprintf("panic: %v", recovered)}
	}
}

// errorClasses picks the protocol's error class by upstream's message text
// (every error the pinned releases return: docs/semantics.md §15, and §19
// for the v1.37 wording).
var errorClasses = []struct {
	text  *regexp.Regexp
	class string
}{
	{regexp.MustCompile(`^cannot get cache key for pod with empty UID$`), "EmptyUIDError"},
	{regexp.MustCompile(`(?s)^pod .* is in the cache, so can't be assumed$`), "TransitionError"},
	{regexp.MustCompile(`(?s)^pod .* was assumed on .* but assigned to `), "TransitionError"},
	{regexp.MustCompile(`(?s)^pod .* wasn't assumed so cannot be forgotten$`), "TransitionError"},
	{regexp.MustCompile(`(?s)^pod .* is not assumed, so it cannot be removed or forgotten$`), "TransitionError"},
	{regexp.MustCompile(`(?s)^pod .* was already in added state$`), "TransitionError"},
	{regexp.MustCompile(`(?s)^pod .* is not added to scheduler cache, so cannot be updated$`), "TransitionError"},
	{regexp.MustCompile(`(?s)^assumed pod .* should not be updated$`), "TransitionError"},
	{regexp.MustCompile(`(?s)^pod .* is not found in scheduler cache, so cannot be removed from it$`), "TransitionError"},
	{regexp.MustCompile(`(?s)^pod .* does not exist in scheduler cache$`), "PodNotFoundError"},
	{regexp.MustCompile(`(?s)^no corresponding pod .* in pods of node `), "PodNotOnNodeError"},
	{regexp.MustCompile(`(?s)^node .* is not found$`), "NodeNotFoundError"},
	{regexp.MustCompile(`(?s)^node .* does not exist in scheduler cache$`), "NodeNotFoundError"},
	{regexp.MustCompile(`(?s)^node ".*" in group ".*" was not found$`), "NodeNotFoundError"},
	{regexp.MustCompile(`^snapshot state is not consistent, `), "SnapshotInconsistentError"},
	// the pod-group listers (docs/semantics.md §20.7)
	{regexp.MustCompile(`(?s)^pod group (state|object) not found for pod group `), "PodGroupNotFoundError"},
	{regexp.MustCompile(`(?s)^composite pod group (state|object) not found for composite pod group `), "PodGroupNotFoundError"},
	{regexp.MustCompile(`^(generic workload|composite pod group) feature gate is disabled$`), "FeatureGateDisabledError"},
	// mutation sessions (§19.12)
	{regexp.MustCompile(`^(cannot stack mutations|no mutation session started|(AddPod|RemovePod)\(\) called outside of mutation session)$`), "MutationSessionError"},
	{regexp.MustCompile(`(?s)^node ".*" not found in the snapshot$`), "NodeNotFoundError"},
	// the snapshot's own ForgetPod (v1.37)
	{regexp.MustCompile(`(?s)^assumed pod ".*" not found in the snapshot$`), "SnapshotAssumedPodNotFoundError"},
	// GetRootKeyForGroup (§20.7)
	{regexp.MustCompile(`(?s)^cycle detected in the hierarchy: `), "PodGroupCycleError"},
	{regexp.MustCompile(`(?s)^pod key type not supported in (GetRootKeyForGroup|FindRootGroup) for `), "EntityKeyTypeError"},
}

// classified remembers the class errorClasses gave each message: the same
// few texts come back every step (a known pod not found, say), and matching
// them against the table again cost a twentieth of the adapter's CPU.
var classified = map[string]string{}

// classifiedLimit bounds classified; past it, it starts again empty.
const classifiedLimit = 4096

// errorClass is the protocol class of an error a cache call returned.
func errorClass(err error) (class string, known bool) {
	if errors.As(err, new(unsupportedError)) {
		return "UnsupportedOperation", true
	}
	message := err.Error()
	if class, seen := classified[message]; seen {
		return class, true
	}
	for _, entry := range errorClasses {
		if entry.text.MatchString(message) {
			if len(classified) >= classifiedLimit {
				clear(classified)
			}
			classified[message] = entry.class
			return entry.class, true
		}
	}
	return "", false
}

// failure is the protocol's answer for a refused, fatal or unparsable request.
func failure(err error) map[string]any {
	var fatal fatalError
	var protocol protocolError
	switch {
	case errors.As(err, &fatal):
		return map[string]any{"ok": false, "fatal": fatal.message}
	case errors.As(err, &protocol):
		return map[string]any{"ok": false, "protocol_error": protocol.message}
	}
	class, known := errorClass(err)
	if !known {
		// A text this table does not know means upstream changed: say so
		// loudly rather than guess a class.
		return map[string]any{"ok": false, "protocol_error": "unclassified upstream error: " + err.Error()}
	}
	return map[string]any{"ok": false, "error": map[string]string{"class": class, "message": err.Error()}}
}
