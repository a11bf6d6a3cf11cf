"""kcache: the kube-scheduler cache as an executable model, and a conformance suite for caches.

The public Python API, for checking a cache from your own code (the `kcache`
command is a thin shell over it):

    from kcache import run_conformance, resolve
    result = run_conformance(resolve("impl"), max_examples=200)

Names are imported on first use, so `import kcache` (which the pytest plugin
does in every pytest run) stays cheap.  docs/architecture.md maps the modules.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

#: public name -> the module that defines it
_EXPORTS: dict[str, str] = {
    # naming and building targets (`--impl`)
    "resolve": "kcache.targets",
    "build_cache": "kcache.targets",
    # the operations, and a cache being driven by them
    "OPS": "kcache.ops",
    "Run": "kcache.ops",
    "Outcome": "kcache.ops",
    # traces
    "Trace": "kcache.traces.trace",
    "Step": "kcache.traces.trace",
    "load_paths": "kcache.traces.trace",
    "loads": "kcache.traces.trace",
    "dumps": "kcache.traces.trace",
    "write_file": "kcache.traces.trace",
    "replay_trace": "kcache.traces.replay",
    "replay_paths": "kcache.traces.replay",
    "representation_checked": "kcache.traces.replay",
    "TraceResult": "kcache.traces.replay",
    "Verdict": "kcache.traces.replay",
    # the conformance machine
    "run_conformance": "kcache.machine.runner",
    "ConformanceResult": "kcache.machine.runner",
    "conformance_machine": "kcache.machine.rules",
    # threads and linearizability
    "run_parallel": "kcache.concurrency.parallel",
    "ParallelResult": "kcache.concurrency.parallel",
    "check_linearizable": "kcache.concurrency.linearizability",
    "read_history": "kcache.concurrency.history",
}
#: public names that differ from the defining module's own name for them
_RENAMED = {"check_linearizable": "check"}

__all__ = [
    "OPS",
    "ConformanceResult",
    "Outcome",
    "ParallelResult",
    "Run",
    "Step",
    "Trace",
    "TraceResult",
    "Verdict",
    "build_cache",
    "check_linearizable",
    "conformance_machine",
    "dumps",
    "load_paths",
    "loads",
    "read_history",
    "replay_paths",
    "replay_trace",
    "representation_checked",
    "resolve",
    "run_conformance",
    "run_parallel",
    "write_file",
]


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'kcache' has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name]), _RENAMED.get(name, name))
    globals()[name] = value
    return value


if TYPE_CHECKING:
    from kcache.concurrency.history import read_history
    from kcache.concurrency.linearizability import check as check_linearizable
    from kcache.concurrency.parallel import ParallelResult, run_parallel
    from kcache.machine.rules import conformance_machine
    from kcache.machine.runner import ConformanceResult, run_conformance
    from kcache.ops import OPS, Outcome, Run
    from kcache.targets import build_cache, resolve
    from kcache.traces.replay import (
        TraceResult,
        Verdict,
        replay_paths,
        replay_trace,
        representation_checked,
    )
    from kcache.traces.trace import Step, Trace, dumps, load_paths, loads, write_file
