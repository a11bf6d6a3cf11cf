"""`python tests/helpers/under_load.py COMMAND...`: run COMMAND beside two CPU-bound processes.

`tox -e loaded` runs the cli, stateful and quality tiers this way, so a test
that guesses how long work takes fails here before it fails on a busy CI
runner.  The busy processes run at the lowest priority, are started before
the command and stopped (by their own process ids) after it, whatever its
end; the command's exit status is returned.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

#: CPU-bound processes beside the command: as many as the two cores of a small CI runner
BUSY = 2


def main(command: list[str]) -> int:
    # SIGTERM (tox or CI cancelling) unwinds like Ctrl-C: the command and the load are stopped
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    busy = [
        # at the lowest priority: the load, not a competitor the command must outrun
        subprocess.Popen(["nice", "-n", "19", sys.executable, "-c", "while True: pass"])
        for _ in range(BUSY)
    ]
    try:
        print(f"under load: {BUSY} busy processes {[p.pid for p in busy]}", flush=True)
        return subprocess.call(command)
    finally:
        for process in busy:
            process.kill()
            process.wait()
        print(f"load average at the end: {os.getloadavg()}", flush=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
