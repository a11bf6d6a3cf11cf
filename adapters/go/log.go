package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/go-logr/logr"
)

// stepLog is the logr sink handed to upstream.  It prints to standard error
// and keeps the current step's error messages: upstream logs its reason just
// before a fatal exit, and that reason becomes the fatal answer's text.
type stepLog struct {
	out    io.Writer
	errors []string
}

var _ logr.LogSink = (*stepLog)(nil)

func (l *stepLog) startStep()           { l.errors = l.errors[:0] }
func (l *stepLog) stepErrors() []string { return l.errors }

func (l *stepLog) Init(logr.RuntimeInfo) {}

// Enabled keeps upstream's default verbosity: V(0) only.
func (l *stepLog) Enabled(level int) bool { return level == 0 }

func (l *stepLog) Info(_ int, msg string, keysAndValues ...any) {
	fmt.Fprintln(l.out, "I", msg, formatValues(keysAndValues))
}

func (l *stepLog) Error(err error, msg string, keysAndValues ...any) {
	if err != nil {
		msg += ": " + err.Error()
	}
	l.errors = append(l.errors, msg)
	fmt.Fprintln(l.out, "E", msg, formatValues(keysAndValues))
}

func (l *stepLog) WithValues(...any) logr.LogSink { return l }
func (l *stepLog) WithName(string) logr.LogSink   { return l }

func formatValues(keysAndValues []any) string {
	parts := make([]string, 0, len(keysAndValues)/2)
	for i := 0; i+1 < len(keysAndValues); i += 2 {
		parts = append(parts, fmt.Sprintf("%v=%v", keysAndValues[i], keysAndValues[i+1]))
	}
	return strings.Join(parts, " ")
}
