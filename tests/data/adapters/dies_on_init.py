"""impl over the adapter protocol, until its Nth `init` (first argument): then it dies (tests only).

kcache sends an `init` before every example; an adapter that dies there, between
two examples, must still be reported with the step, its stderr and the steps
that led there.
"""

import json
import sys
from collections.abc import Iterator

from kcache import targets
from kcache.targets.adapter.server import serve


def requests(dies_at: int) -> Iterator[str]:
    seen = 0
    for line in sys.stdin:
        if json.loads(line).get("op") == "init":
            seen += 1
            if seen == dies_at:
                print(f"adapter: panic: init number {seen} refused", file=sys.stderr, flush=True)
                sys.exit(7)
        yield line


answers = sys.stdout
sys.stdout = sys.stderr
sys.exit(serve(targets.resolve("impl"), "dies-on-init", requests(int(sys.argv[1])), answers))
