"""`python -m benchmarks.explain_scaling [N...]`: whether `kcache explain` grows like `replay`.

Telling a trace used to read and print the whole cache after every step, so
its time and memory grew with the square of the trace: 300 nodes and 3,000
pods took 73 s and 4 GB.  This builds traces of N nodes and 10 N pods
(add every node, add every pod, observe once), then tells and replays each
in a fresh process and prints seconds, microseconds per step and peak memory
for both.  Linear means the per-step figures stay flat as N grows.
"""

from __future__ import annotations

import io
import json
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: cluster sizes (nodes) measured by default; pods are ten per node
DEFAULT_SIZES = (30, 100, 300, 1000)


def trace_document(nodes: int) -> dict[str, Any]:
    """A trace adding `nodes` nodes and ten pods on each, then observing the counts."""
    allocatable = {"cpu": "64", "memory": "256Gi", "pods": "110"}
    steps: list[dict[str, Any]] = [
        {
            "op": "add_node",
            "node": {"metadata": {"name": f"n{i}"}, "status": {"allocatable": allocatable}},
        }
        for i in range(nodes)
    ]
    for i in range(nodes * 10):
        container = {"name": "c", "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}
        pod = {
            "metadata": {"name": f"p{i}", "namespace": "default", "uid": f"u{i}"},
            "spec": {"nodeName": f"n{i % nodes}", "containers": [container]},
        }
        steps.append({"op": "add_pod", "pod": pod, "expect": {"error": False}})
    steps.append({"op": "observe", "expect": {"node_count": nodes, "pod_count": nodes * 10}})
    return {"name": f"{nodes} nodes", "release": "v1.37", "steps": steps}


def measure(path: str, command: str) -> dict[str, float]:
    """Run `command` (explain or replay) on the trace at `path` in this process; its figures."""
    from kcache.spec.cache import Cache  # noqa: PLC0415 -- measured in a fresh process
    from kcache.traces.explain import write_story  # noqa: PLC0415
    from kcache.traces.replay import replay_trace  # noqa: PLC0415
    from kcache.traces.trace import load_file  # noqa: PLC0415

    (trace,) = load_file(path)
    started = time.perf_counter()
    if command == "explain":
        sink = io.StringIO()
        write_story(trace, Cache, "spec", sink)
        printed = sink.tell()
    else:
        replay_trace(trace, Cache)
        printed = 0
    seconds = time.perf_counter() - started
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "seconds": seconds,
        "peak_mib": peak_kib / 1024,
        "steps": len(trace.steps),
        "chars": printed,
    }


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["--measure"]:  # the child: one measurement, as JSON
        print(json.dumps(measure(args[1], args[2])))
        return 0
    sizes = [int(arg) for arg in args] or list(DEFAULT_SIZES)
    header = ("nodes", "pods", "steps", "command", "seconds", "µs/step", "peak MiB")
    print("{:>6} {:>7} {:>7}  {:<8} {:>8} {:>8} {:>9}".format(*header))
    with tempfile.TemporaryDirectory() as folder:
        for nodes in sizes:
            path = Path(folder) / f"{nodes}.json"
            path.write_text(json.dumps(trace_document(nodes)) + "\n")
            for command in ("replay", "explain"):
                child = subprocess.run(
                    [
                        sys.executable,
                        "-m",
                        "benchmarks.explain_scaling",
                        "--measure",
                        str(path),
                        command,
                    ],
                    capture_output=True,
                    text=True,
                    check=True,
                )
                figures = json.loads(child.stdout)
                per_step = figures["seconds"] / figures["steps"] * 1e6
                print(
                    f"{nodes:>6} {nodes * 10:>7} {int(figures['steps']):>7}  {command:<8} "
                    f"{figures['seconds']:>8.2f} {per_step:>8.0f} {figures['peak_mib']:>9.0f}"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
