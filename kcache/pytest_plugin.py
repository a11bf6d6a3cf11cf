"""pytest plugin: run the kcache conformance machine inside a user's own test run.

`pytest --kcache-impl TARGET` adds one test item, `kcache-conformance[TARGET]`,
that checks TARGET against the spec exactly as `kcache conform` does; a
disagreement fails the item with its shrunk trace written under
`--kcache-out` and the commands to replay and explain it.

Loaded through the `pytest11` entry point, so it must stay cheap to import and
inert unless `--kcache-impl` is given: every pytest run in an environment with
kcache installed loads it.  The harness (Hypothesis, the machine) is imported
only when the item runs.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from kcache.spec.releases import DEFAULT_RELEASE, RELEASES

ITEM_NAME = "kcache-conformance"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("kcache", "kcache conformance")
    group.addoption(
        "--kcache-impl",
        metavar="TARGET",
        default=None,
        help="check TARGET (spec | impl | MODULE:FACTORY | cmd:COMMAND... | go) against the spec",
    )
    group.addoption(
        "--kcache-max-examples",
        metavar="N",
        type=int,
        default=None,
        help="Hypothesis examples for the kcache conformance item (default: the profile's)",
    )
    group.addoption(
        "--kcache-seed",
        metavar="N",
        type=int,
        default=None,
        help="seed for the conformance item, to repeat a run (default: a fresh one, reported)",
    )
    group.addoption(
        "--kcache-release",
        choices=sorted(RELEASES),
        default=DEFAULT_RELEASE.name,
        help=f"the upstream release to hold TARGET to (default: {DEFAULT_RELEASE.name})",
    )
    group.addoption(
        "--kcache-out",
        metavar="DIR",
        default="kcache-failures",
        help="folder for failing traces (default: ./kcache-failures/)",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Refuse a budget that cannot run, before anything is collected."""
    examples = config.getoption("kcache_max_examples")
    if examples is not None and examples < 1:
        raise pytest.UsageError(f"--kcache-max-examples must be at least 1, got {examples}")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """Add the conformance item first, so -k and -m can still deselect it.

    The item is reported as collected too, as a collector's result would be:
    pytest's "collected N items" line then counts it, rather than saying
    "collected 0 items" before "1 passed".
    """
    target = config.getoption("kcache_impl")
    if target is not None:
        item = ConformanceItem.from_parent(session, name=f"{ITEM_NAME}[{target}]", target=target)
        items.append(item)
        report = pytest.CollectReport(item.nodeid, "passed", None, [item])
        config.hook.pytest_collectreport(report=report)


class ConformanceError(Exception):
    """The target disagreed with the spec: the report's text."""


class ConformanceItem(pytest.Item):
    """One conformance run of `target` against the spec."""

    def __init__(self, *, target: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.target = target

    def runtest(self) -> None:
        # imported here: the harness (Hypothesis, the machine) is slow to import; it passes
        # the profile's settings explicitly, so the user's Hypothesis profile stays loaded
        from kcache.cli import machine_run, options, report  # noqa: PLC0415
        from kcache.errors import KcacheError  # noqa: PLC0415
        from kcache.files import check_folder  # noqa: PLC0415
        from kcache.machine.profiles import selected  # noqa: PLC0415

        config = self.config
        release = config.getoption("kcache_release")
        try:
            out_dir = Path(config.getoption("kcache_out"))
            check_folder(out_dir, "--kcache-out")  # before the run: a failure found is kept
            profile = selected(os.environ)
            seed = options.run_seed(config.getoption("kcache_seed"), profile)
            finished = machine_run.run_machine(
                self.target,
                release=RELEASES[release],
                seed=seed,
                out_dir=out_dir,
                profile=profile,
                max_examples=config.getoption("kcache_max_examples"),
                time_budget=None,
            )
        except KcacheError as error:
            raise ConformanceError(f"kcache could not run: {error}") from None
        result = finished.result
        if result.interrupted:
            raise KeyboardInterrupt  # stopped cleanly between examples; pytest ends the session
        summary = report.describe_result(result)
        if seed is not None:
            summary += f", seed {seed} (--kcache-seed {seed} repeats it)"
        self._record(summary)
        if result.failure is not None:
            failure = result.failure
            lines = [
                f"{self.target} diverges from the spec ({release}): {summary}",
                failure.message,
            ]
            lines.append(report.failure_details(finished, self.target))
            if failure.write_error is not None:  # the trace itself, since it is not on disk
                lines.append(failure.trace_text)
            raise ConformanceError("\n".join(lines))

    def _record(self, summary: str) -> None:
        """Keep the run's figures and seed in a --junitxml report, where its schema allows.

        xunit2, pytest's default family, has no properties on a testcase (Jenkins
        rejects such a report), so there they are a property of the suite;
        xunit1 and legacy keep them on the testcase.
        """
        if self.config.getini("junit_family") != "xunit2":
            self.user_properties.append(("kcache", summary))
            return
        from _pytest.junitxml import xml_key  # noqa: PLC0415 -- only when a report is written

        report = self.config.stash.get(xml_key, None)
        if report is not None:
            report.add_global_property("kcache", summary)

    def repr_failure(
        self,
        excinfo: pytest.ExceptionInfo[BaseException],
        style: Any = None,
    ) -> str:
        """The report's text alone: the machine's own traceback would only hide it."""
        if isinstance(excinfo.value, ConformanceError):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo, style=style))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"kcache conformance of {self.target}"
