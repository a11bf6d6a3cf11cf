"""An adapter with one fault of the kind a real one has, named by its first argument (tests only).

Each fault starts like a healthy adapter of an empty cache (handshake, `init`
and the reads an empty cache answers), then misbehaves on the first request
that changes the cache.  Where a test must act while the fault is under way,
the adapter writes the file named by its second argument first: a test waits
for that file, never for a clock.
"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from empty_cache import EMPTY_CACHE_READS

HANDSHAKE = {"kcache_adapter": 1, "name": "faulty", "releases": ["v1.35", "v1.36", "v1.37"]}


def send(answer: object) -> None:
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()


def mark(text: str = "") -> None:
    """Write the marker file the test waits for (atomically: it appears whole)."""
    marker = Path(sys.argv[2])
    own = marker.with_name(f".{marker.name}.{os.getpid()}")
    own.write_text(text)
    own.replace(marker)


def deaf() -> None:
    """Stops reading its input once `init` is answered: a large request cannot be written."""
    mark(str(os.getpid()))
    time.sleep(300)


def hang() -> None:
    """Hangs on a change, with a child of its own that must be stopped too."""
    child = subprocess.Popen(["sleep", "300"])
    mark(str(child.pid))
    time.sleep(300)


def exit_leaving_a_helper() -> None:
    """Exits without answering, while a helper it started keeps its output open."""
    helper = subprocess.Popen(["sleep", "300"], stdout=sys.stdout, stderr=sys.stderr)
    mark(str(helper.pid))
    print("adapter: giving up, my helper carries on", file=sys.stderr, flush=True)
    sys.exit(4)


def flood_stderr() -> None:
    """Writes a great deal to stderr without a newline, then one last line, then dies."""
    size = int(sys.argv[3])
    block = b"x" * (1 << 20)
    for _ in range(size >> 20):
        sys.stderr.buffer.write(block)
    sys.stderr.buffer.write(b"\nadapter: panic: the last words\n")
    sys.stderr.flush()
    sys.exit(5)


#: fault -> what the adapter does on the first request that changes the cache
ON_CHANGE = {
    "deaf": deaf,
    "hang": hang,
    "exit-leaving-a-helper": exit_leaving_a_helper,
    "flood-stderr": flood_stderr,
}


def wrong_types() -> None:
    """A cache that holds the pods it is given, and lists the assumed ones as a string."""
    send(HANDSHAKE)
    assumed: list[str] = []
    for line in sys.stdin:
        request = json.loads(line)
        op = request["op"]
        if op == "assume_pod":
            metadata = request["pod"]["metadata"]
            assumed.append(f"{metadata['namespace']}/{metadata['name']}")
            send({"ok": True})
        elif op == "dump":
            send(
                {
                    "ok": True,
                    "nodes": {},
                    "assumed": ",".join(assumed),
                    "node_count": 0,
                    "pod_count": len(assumed),
                }
            )
        else:
            send(EMPTY_CACHE_READS.get(op, {"ok": True}))


def main() -> None:
    fault = sys.argv[1]
    if fault == "wrong-types":
        wrong_types()
        return
    send(HANDSHAKE)
    for line in sys.stdin:
        op = json.loads(line)["op"]
        if op == "quit":
            return
        if op in EMPTY_CACHE_READS:
            send(EMPTY_CACHE_READS[op])
            if fault == "deaf" and op == "init":
                deaf()
        else:
            ON_CHANGE[fault]()


main()
