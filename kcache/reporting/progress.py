"""Progress of a conformance run, as people watching it want to see it.

On a terminal the run shows one status line on stderr that rewrites itself in
place, at most a few times a second so that drawing never costs more than the
run.  Anywhere else (CI logs, pipes) a rewriting line is noise, so it prints a
full line only every `every` seconds, or nothing when no period is given; the
command prints its own summary at the end either way.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TextIO

import attrs

#: ANSI "erase to end of line": a shorter line must not leave the tail of a longer one.
_ERASE_LINE = "\x1b[K"
#: redraws per second on a terminal; more is flicker, not information
_REDRAW_SECONDS = 0.1
#: what a run stopped by its progress stream going away is "stopped by"
STREAM_CLOSED = "a closed stderr"


@attrs.frozen
class Tally:
    """What a run has done so far."""

    examples: int = 0
    steps: int = 0
    failures: int = 0


def format_elapsed(seconds: float) -> str:
    """`12.3s` under a minute, `4m05s` under an hour, `1h02m03s` beyond."""
    if seconds < 60:
        return f"{seconds:.1f}s"
    whole = int(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m{secs:02d}s" if hours else f"{minutes}m{secs:02d}s"


def describe(tally: Tally, elapsed: float) -> str:
    """One line: examples, steps, steps/s, elapsed time and failures."""
    rate = tally.steps / elapsed if elapsed > 0 else 0.0
    failures = "1 failure" if tally.failures == 1 else f"{tally.failures} failures"
    return (
        f"{tally.examples} examples, {tally.steps} steps, {rate:.0f} steps/s, "
        f"{format_elapsed(elapsed)} elapsed, {failures}"
    )


class ProgressLine:
    """Report a run's tally on `stream`: live on a terminal, periodic elsewhere."""

    def __init__(
        self,
        stream: TextIO,
        *,
        live: bool,
        every: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._stream = stream
        self._live = live
        self._every = every
        self._clock = clock
        self._started = clock()
        self._last_drawn: float | None = None
        self._tally = Tally()
        self._detail = ""
        self._line_open = False
        #: the stream went away (`2>&1 | head`, a closed descriptor): nothing is drawn since
        self.closed = False

    @classmethod
    def for_stream(cls, stream: TextIO, *, every: float | None = None) -> ProgressLine:
        """Live when `stream` is a terminal, periodic (or silent) otherwise."""
        return cls(stream, live=stream.isatty(), every=every)

    @property
    def elapsed(self) -> float:
        """Seconds since this reporter was made."""
        return self._clock() - self._started

    @property
    def tally(self) -> Tally:
        """The last tally reported."""
        return self._tally

    def update(self, tally: Tally, detail: str = "") -> None:
        """Record `tally` and a `detail` to show after it; draw them if the last drawing is old."""
        self._tally = tally
        self._detail = detail
        now = self._clock()
        period = _REDRAW_SECONDS if self._live else self._every
        if period is None:
            return
        if self._last_drawn is not None and now - self._last_drawn < period:
            return
        self._last_drawn = now
        self._draw()

    def finish(self) -> None:
        """End the live line so that whatever is printed next starts on a clean line."""
        if self._line_open:
            self._line_open = False
            self._write("\r" + _ERASE_LINE)

    def _draw(self) -> None:
        line = describe(self._tally, self.elapsed) + (f"; {self._detail}" if self._detail else "")
        if self._live:
            self._line_open = True  # first: a Ctrl-C during the write must still clear it
            self._write("\r" + line + _ERASE_LINE)
        else:
            self._write(line + "\n")

    def _write(self, text: str) -> None:
        """Write and flush `text`, unless the stream is gone: then note it, and stay silent.

        A run whose watcher went away stops (its caller looks at `closed`), but it
        must stop as Ctrl-C stops it, keeping what it found, not die on the write.
        """
        if self.closed:
            return
        try:
            self._stream.write(text)
            self._stream.flush()
        except (OSError, ValueError):  # ValueError: the file object itself was closed
            self.closed = True
