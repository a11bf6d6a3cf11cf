"""Benchmarks of the optimized cache (`impl`): run `python -m benchmarks [--quick]`.

Speed and memory targets are checked here, never in timed tests: snapshot
refreshes against full rebuilds, operation throughput, memory per pod and
per node, and how all of that scales with the cluster (docs/performance.md
explains each number).
"""
