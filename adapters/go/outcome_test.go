package main

import (
	"errors"
	"fmt"
	"testing"
)

func TestErrorClassesAreRememberedWithinABound(t *testing.T) {
	clear(classified)
	notFound := errors.New("pod u9(ns/q) does not exist in scheduler cache")
	for range 2 { // the second answer comes from what the first remembered
		if class, known := errorClass(notFound); class != "PodNotFoundError" || !known {
			t.Errorf("errorClass(%q) = %q, %v; want PodNotFoundError", notFound, class, known)
		}
	}
	for i := range classifiedLimit + 1 {
		if class, _ := errorClass(fmt.Errorf("node n%d is not found", i)); class != "NodeNotFoundError" {
			t.Fatalf("node n%d: class %q, want NodeNotFoundError", i, class)
		}
	}
	if len(classified) > classifiedLimit {
		t.Errorf("%d messages remembered, more than %d", len(classified), classifiedLimit)
	}
	unknown := errors.New("something upstream never said")
	if class, known := errorClass(unknown); known || class != "" {
		t.Errorf("errorClass(%q) = %q, %v; want no class", unknown, class, known)
	}
	if _, remembered := classified[unknown.Error()]; remembered {
		t.Errorf("a text no class matches was remembered")
	}
}
