package main

import (
	"encoding/json"
	"math/big"
	"regexp"
	"time"

	v1 "k8s.io/api/core/v1"
)

// request is one parsed request line: its op and its other keys, still raw.
type request struct {
	op     string
	fields map[string]json.RawMessage
}

func parseRequest(line []byte) (request, error) {
	if !json.Valid(line) {
		return request{}, protocolErrorf("request is not one JSON object: %.200q", line)
	}
	return parseValidRequest(line)
}

// parseValidRequest is parseRequest of a line known to be valid JSON: one of
// the requests of a batch or sequence, whose line was checked whole.
func parseValidRequest(line []byte) (request, error) {
	fields, isObject := jsonMembers(line)
	if !isObject {
		return request{}, protocolErrorf("request is not one JSON object: %.200q", line)
	}
	var op string
	if err := json.Unmarshal(fields["op"], &op); err != nil || op == "" {
		return request{}, protocolErrorf(`request has no "op" string: %.200q`, line)
	}
	return request{op: op, fields: fields}, nil
}

// present is the raw value of key, or false when it is absent or null.
func (r request) present(key string) (json.RawMessage, bool) {
	raw, ok := r.fields[key]
	if !ok || string(raw) == "null" {
		return nil, false
	}
	return raw, true
}

// decode reads a required key into target, naming op and key on failure.
func (r request) decode(key string, target any) error {
	raw, ok := r.present(key)
	if !ok {
		return protocolErrorf("%s: missing %q", r.op, key)
	}
	if err := json.Unmarshal(raw, target); err != nil {
		return protocolErrorf("%s: %q: %v", r.op, key, err)
	}
	return nil
}

// pod reads a Kubernetes pod straight into upstream's v1.Pod.
func (r request) pod(key string) (*v1.Pod, error) {
	pod := &v1.Pod{}
	return pod, r.decode(key, pod)
}

// node reads a Kubernetes node straight into upstream's v1.Node.
func (r request) node(key string) (*v1.Node, error) {
	node := &v1.Node{}
	return node, r.decode(key, node)
}

// optionalNode is node, or nil for an absent or null key (UpdateNode(nil, n)).
func (r request) optionalNode(key string) (*v1.Node, error) {
	if _, ok := r.present(key); !ok {
		return nil, nil
	}
	return r.node(key)
}

// flag reads an optional boolean; absent or null is false.
func (r request) flag(key string) (bool, error) {
	var value bool
	if _, ok := r.present(key); !ok {
		return false, nil
	}
	return value, r.decode(key, &value)
}

func (r request) str(key string) (string, error) {
	var value string
	return value, r.decode(key, &value)
}

func (r request) optionalString(key, fallback string) (string, error) {
	if _, ok := r.present(key); !ok {
		return fallback, nil
	}
	return r.str(key)
}

// instant reads a required time in seconds: virtual time from the epoch.
func (r request) instant(key string) (time.Time, error) {
	nanoseconds, err := r.nanoseconds(key)
	return time.Unix(0, nanoseconds), err
}

// duration reads optional seconds (absent means 0).
func (r request) duration(key string) (time.Duration, error) {
	if _, ok := r.present(key); !ok {
		return 0, nil
	}
	nanoseconds, err := r.nanoseconds(key)
	return time.Duration(nanoseconds), err
}

// decimalSeconds is a JSON number, also accepted inside a string ("12.5").
var decimalSeconds = regexp.MustCompile(`^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d{1,4})?$`)

// nanoseconds converts decimal seconds exactly; upstream's clock counts
// nanoseconds, so a finer time cannot be given to it and is refused.
func (r request) nanoseconds(key string) (int64, error) {
	raw, ok := r.present(key)
	if !ok {
		return 0, protocolErrorf("%s: missing %q", r.op, key)
	}
	text := string(raw)
	var quoted string
	if json.Unmarshal(raw, &quoted) == nil {
		text = quoted
	}
	var seconds *big.Rat
	if decimalSeconds.MatchString(text) { // bounds the exponent before big.Rat sees it
		seconds, ok = new(big.Rat).SetString(text)
	}
	if seconds == nil || !ok {
		return 0, protocolErrorf("%s: %q: %.50q is not a decimal number of seconds", r.op, key, text)
	}
	nanoseconds := seconds.Mul(seconds, big.NewRat(int64(time.Second), 1))
	if !nanoseconds.IsInt() || !nanoseconds.Num().IsInt64() {
		return 0, protocolErrorf("%s: %q: %s s is finer than a nanosecond or out of range for upstream's clock", r.op, key, text)
	}
	return nanoseconds.Num().Int64(), nil
}

// optionalGates reads a {GateName: bool} object; absent or null is none.
func (r request) optionalGates(key string) (map[string]bool, error) {
	gates := map[string]bool{}
	if _, ok := r.present(key); !ok {
		return gates, nil
	}
	return gates, r.decode(key, &gates)
}
