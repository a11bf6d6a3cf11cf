//go:build tools

// This file only records dependencies: the overlay build compiles upstream's
// scheduler cache and scheduler sources as internal/upstream*, so `go mod
// tidy` must see the packages those sources import.  Importing the real
// packages does that.
package main

import (
	_ "k8s.io/kubernetes/pkg/scheduler"
	_ "k8s.io/kubernetes/pkg/scheduler/backend/cache"
)
