"""The conformance machine: Hypothesis rules that drive a cache and the spec in lockstep."""
