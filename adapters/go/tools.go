//go:build tools

// This file only records a dependency: the overlay build compiles upstream's
// scheduler cache sources as internal/upstreamcache, so `go mod tidy` must see
// the packages those sources import.  Importing the real package does that.
package main

import _ "k8s.io/kubernetes/pkg/scheduler/backend/cache"
