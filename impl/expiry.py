"""The background loop that expires assumed pods (upstream's `wait.Until(cleanupAssumedPods)`).

Time comes from an injected clock, so the same loop runs on wall-clock time
in production and on virtual time in tests.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from decimal import Decimal


class ExpiryLoop:
    """A daemon thread calling `cleanup(clock())` at once and then every `period` seconds.

    A failure inside the loop (upstream would have ended the process) stops
    the loop and is kept in `failure` for whoever stops it.
    """

    __slots__ = ("_stopping", "_thread", "failure")

    def __init__(
        self, cleanup: Callable[[Decimal], None], clock: Callable[[], Decimal], period: float
    ) -> None:
        self._stopping = threading.Event()
        self.failure: Exception | None = None
        self._thread = threading.Thread(
            target=self._run, args=(cleanup, clock, period), name="kcache-expiry", daemon=True
        )
        self._thread.start()

    def _run(
        self, cleanup: Callable[[Decimal], None], clock: Callable[[], Decimal], period: float
    ) -> None:
        while not self._stopping.is_set():
            try:
                cleanup(clock())
            except Exception as error:  # a thread has no caller: keep it for stop()
                self.failure = error
                return
            self._stopping.wait(period)

    def stop(self) -> Exception | None:
        """Stop the loop, wait for its thread to end, and return what made it fail, if anything."""
        self._stopping.set()
        self._thread.join()
        return self.failure
