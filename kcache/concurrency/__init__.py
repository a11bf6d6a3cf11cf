"""Concurrency: threaded programs on one cache, their histories, and the linearizability check."""
