"""A JUnit XML report of one conformance run, for CI systems that read JUnit.

CI servers (GitLab, Jenkins, GitHub annotations) show a failed testcase with
its message and body, so the failure carries the one-line reason (the first
step and field that differ) as its message and the trace path plus the
commands to run next as its body.  The testcase's own system-out repeats the
summary, the trace path and the commands (GitLab and Jenkins show it beside
the failure), and names the trace as an attachment (`[[ATTACHMENT|path]]`,
which GitLab and Jenkins' attachments plugin link to).  When kcache could not
run at all (exit 2: a bad target, a dead adapter), the testcase carries an
`error` instead, so the CI shows a broken gate, not a missing report.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path

import attrs

from kcache.files import write_atomically


@attrs.frozen
class JUnitCase:
    """The single testcase a conformance run reports."""

    suite: str
    name: str
    seconds: float
    #: run parameters worth keeping beside the result (target, release, seed, ...)
    properties: Mapping[str, str] = attrs.field(factory=dict)
    #: one-line reason; None when the run passed
    failure: str | None = None
    #: longer text under the failure: trace path, replay and explain commands
    details: str = ""
    #: the run's summary, shown first in the testcase's captured output
    summary: str = ""
    #: why kcache could not run (exit 2); None when it ran
    error: str | None = None
    #: files to attach (the failing trace), named in the captured output
    attachments: tuple[Path, ...] = ()


def junit_xml(case: JUnitCase) -> str:
    """The report as an XML document (UTF-8 declared, one suite, one testcase)."""
    failures = "0" if case.failure is None or case.error is not None else "1"
    errors = "0" if case.error is None else "1"
    seconds = f"{case.seconds:.3f}"
    suites = ET.Element("testsuites", tests="1", failures=failures, errors=errors, time=seconds)
    suite = ET.SubElement(
        suites,
        "testsuite",
        name=case.suite,
        tests="1",
        failures=failures,
        errors=errors,
        skipped="0",
        time=seconds,
    )
    if case.properties:
        properties = ET.SubElement(suite, "properties")
        for name, value in case.properties.items():
            ET.SubElement(properties, "property", name=name, value=value)
    testcase = ET.SubElement(suite, "testcase", classname=case.suite, name=case.name, time=seconds)
    if case.error is not None:
        error = ET.SubElement(testcase, "error", message=case.error, type="KcacheError")
        error.text = case.details or case.error
    elif case.failure is not None:
        failure = ET.SubElement(
            testcase, "failure", message=case.failure, type="ConformanceFailure"
        )
        failure.text = case.details
    output = [case.summary, case.details]
    output += [f"[[ATTACHMENT|{path.resolve()}]]" for path in case.attachments]
    if any(output):
        ET.SubElement(testcase, "system-out").text = "\n".join(part for part in output if part)
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


def write_junit(path: Path, case: JUnitCase) -> None:
    """Write the report to `path`, creating its folder; whole or not at all."""
    write_atomically(path, junit_xml(case))
