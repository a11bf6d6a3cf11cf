// Package debugger is upstream's k8s.io/kubernetes/pkg/scheduler/backend/cache/debugger, compiled here under
// another import path so that it links the cache of ../upstreamcache.
//
// This directory holds no upstream code: the build's -overlay file maps
// upstream's non-test sources here, those importing a placed package as a
// copy whose import paths alone are rewritten (see ../../README.md).
package debugger
