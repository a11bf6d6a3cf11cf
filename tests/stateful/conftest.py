"""Collects what the stateful tests measure and prints it at the end of the session."""

from __future__ import annotations

import pytest

#: rows of the steps-to-catch table, filled by test_teeth.py through `steps_to_catch`
STEPS_TO_CATCH: list[tuple[str, int, int, int, float]] = []


@pytest.fixture(scope="session")
def steps_to_catch() -> list[tuple[str, int, int, int, float]]:
    """(bug, examples, steps, trace steps, seconds) for each seeded bug caught."""
    return STEPS_TO_CATCH


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not STEPS_TO_CATCH:
        return
    write = terminalreporter.write_line
    terminalreporter.section("seeded bugs: steps to catch (default profile)")
    write(f"{'bug':<32} {'examples':>8} {'steps':>6} {'trace':>5} {'seconds':>7}")
    for name, examples, steps, trace_steps, seconds in sorted(STEPS_TO_CATCH):
        write(f"{name:<32} {examples:>8} {steps:>6} {trace_steps:>5} {seconds:>7.1f}")
