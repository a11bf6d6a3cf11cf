"""How kcache sets Python's cyclic garbage collector.

A conformance step makes thousands of short-lived objects: at the default
thresholds (700, 10, 10) the collector ran every few steps and walked the
strategies' prepared pools each time, a fifteenth of a run's CPU.  A run
therefore collects less often and leaves what existed before it out of
every collection (`fewer_collections`), and puts back what it found.

The `kcache` command is one process that ends after its command, so it
runs at the run's thresholds from its start (`command_started`) and leaves
everything out of the interpreter's last collection (`command_ending`):
putting the default thresholds back after a run set off a collection of
every object the run left, and the interpreter collects all it holds
before it exits, together 0.3 to 0.5 CPU s of a default `kcache conform`
(about 5%) for memory the process gives back a moment later anyway.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

#: the collector's thresholds while the machine runs, and in the `kcache` command
RUN_THRESHOLDS = (50_000, 20, 100)


@contextlib.contextmanager
def fewer_collections() -> Iterator[None]:
    """Collect cyclic garbage less often while the machine runs, and leave what exists
    before (modules, the strategies' pools) out of every collection; restored after."""
    before = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(*RUN_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()


def command_started() -> None:
    """The `kcache` command's process collects at the run's thresholds throughout."""
    gc.set_threshold(*RUN_THRESHOLDS)


def command_ending() -> None:
    """The `kcache` command's process is about to exit: nothing it holds is collected again."""
    gc.freeze()
