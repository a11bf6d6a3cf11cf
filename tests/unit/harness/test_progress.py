"""Tests for `kcache.reporting.progress`."""

from __future__ import annotations

import io

import pytest

from kcache.reporting.progress import ProgressLine, Tally, describe, format_elapsed


class FakeClock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class TestFormatElapsed:
    @pytest.mark.parametrize(
        ("seconds", "shown"),
        [(0, "0.0s"), (12.34, "12.3s"), (59.9, "59.9s"), (60, "1m00s"), (245, "4m05s")],
    )
    def test_short_runs(self, seconds: float, shown: str) -> None:
        """Seconds with one decimal under a minute, minutes and seconds under an hour."""
        assert format_elapsed(seconds) == shown

    def test_hours(self) -> None:
        """Past an hour the hours lead."""
        assert format_elapsed(3723) == "1h02m03s"


class TestDescribe:
    def test_every_figure_is_shown(self) -> None:
        """The line carries examples, steps, rate, elapsed time and failures."""
        line = describe(Tally(examples=3, steps=500, failures=1), elapsed=2.0)
        assert line == "3 examples, 500 steps, 250 steps/s, 2.0s elapsed, 1 failure"

    def test_no_time_no_rate(self) -> None:
        """At the very start the rate is 0 rather than a division by zero."""
        assert describe(Tally(), elapsed=0.0).startswith("0 examples, 0 steps, 0 steps/s")

    def test_plural_failures(self) -> None:
        """Failures other than one are plural."""
        assert describe(Tally(failures=2), elapsed=1.0).endswith("2 failures")


class TestProgressLine:
    def test_live_line_rewrites_in_place(self) -> None:
        """On a terminal every drawing starts with a carriage return and erases the old tail."""
        out, clock = io.StringIO(), FakeClock()
        progress = ProgressLine(out, live=True, clock=clock)
        clock.now += 1
        progress.update(Tally(examples=1, steps=10))
        assert (
            out.getvalue() == "\r1 examples, 10 steps, 10 steps/s, 1.0s elapsed, 0 failures\x1b[K"
        )
        assert "\n" not in out.getvalue()

    def test_live_line_is_throttled(self) -> None:
        """Updates closer together than a tenth of a second draw once."""
        out, clock = io.StringIO(), FakeClock()
        progress = ProgressLine(out, live=True, clock=clock)
        progress.update(Tally(steps=1))
        clock.now += 0.05
        progress.update(Tally(steps=2))
        assert out.getvalue().count("\r") == 1
        clock.now += 0.06
        progress.update(Tally(steps=3))
        assert out.getvalue().count("\r") == 2

    def test_finish_clears_the_live_line(self) -> None:
        """After finish, the next output starts on an empty line."""
        out, clock = io.StringIO(), FakeClock()
        progress = ProgressLine(out, live=True, clock=clock)
        progress.update(Tally(steps=1))
        progress.finish()
        assert out.getvalue().endswith("\r\x1b[K")

    def test_finish_without_drawing_writes_nothing(self) -> None:
        """A run that never drew leaves the stream untouched."""
        out = io.StringIO()
        progress = ProgressLine(out, live=True, clock=FakeClock())
        progress.finish()
        assert out.getvalue() == ""

    def test_not_a_terminal_and_no_period_is_silent(self) -> None:
        """Off a terminal without a period, progress prints nothing."""
        out, clock = io.StringIO(), FakeClock()
        progress = ProgressLine(out, live=False, clock=clock)
        for steps in range(5):
            clock.now += 10
            progress.update(Tally(steps=steps))
        progress.finish()
        assert out.getvalue() == ""
        assert progress.tally == Tally(steps=4)

    def test_periodic_lines_off_a_terminal(self) -> None:
        """Off a terminal with a period, whole lines appear at most once per period."""
        out, clock = io.StringIO(), FakeClock()
        progress = ProgressLine(out, live=False, every=60, clock=clock)
        progress.update(Tally(steps=1))
        clock.now += 30
        progress.update(Tally(steps=2))
        clock.now += 30
        progress.update(Tally(steps=3))
        lines = out.getvalue().splitlines()
        assert [line.split(", ")[1] for line in lines] == ["1 steps", "3 steps"]
        assert "\r" not in out.getvalue()

    def test_for_stream_follows_isatty(self) -> None:
        """A stream that is not a terminal gets the quiet reporter."""
        out = io.StringIO()
        progress = ProgressLine.for_stream(out)
        progress.update(Tally(steps=1))
        assert out.getvalue() == ""

    def test_interrupted_drawing_is_still_cleared(self) -> None:
        """Ctrl-C in the middle of drawing leaves a line that finish still clears."""

        class InterruptedOnce(io.StringIO):
            interrupted = False

            def write(self, text: str) -> int:
                written = super().write(text)
                if not self.interrupted:
                    self.interrupted = True
                    raise KeyboardInterrupt
                return written

        out, clock = InterruptedOnce(), FakeClock()
        progress = ProgressLine(out, live=True, clock=clock)
        with pytest.raises(KeyboardInterrupt):
            progress.update(Tally(steps=1))
        progress.finish()
        assert out.getvalue().endswith("\x1b[K\r\x1b[K")
