"""Tests for `kcache.reporting.junit`."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from kcache.reporting.junit import JUnitCase, junit_xml, write_junit


def parse(case: JUnitCase) -> ET.Element:
    return ET.fromstring(junit_xml(case))


class TestJUnitXml:
    def test_passing_run_is_one_testcase_without_failure(self) -> None:
        """A pass is one suite holding one testcase and no failure element."""
        root = parse(JUnitCase(suite="kcache conform", name="impl v1.35", seconds=1.5))
        assert root.tag == "testsuites"
        assert root.get("tests") == "1"
        assert root.get("failures") == "0"
        (suite,) = root
        assert suite.get("name") == "kcache conform"
        assert suite.get("time") == "1.500"
        cases = suite.findall("testcase")
        assert [case.get("name") for case in cases] == ["impl v1.35"]
        assert cases[0].find("failure") is None

    def test_failure_carries_message_and_details(self) -> None:
        """A failure keeps the one-line reason as its message and the trace path in its body."""
        root = parse(
            JUnitCase(
                suite="kcache conform",
                name="impl v1.35",
                seconds=2.0,
                failure='step 4 (remove_pod): "pods" expected [] got ["u1"]',
                details="trace: kcache-failures/x.json",
            )
        )
        assert root.get("failures") == "1"
        failure = root.find("testsuite/testcase/failure")
        assert failure is not None
        assert failure.get("message") == 'step 4 (remove_pod): "pods" expected [] got ["u1"]'
        assert failure.text == "trace: kcache-failures/x.json"

    def test_properties_and_summary(self) -> None:
        """Run parameters become properties and the summary becomes captured output."""
        root = parse(
            JUnitCase(
                suite="s",
                name="n",
                seconds=0.0,
                properties={"impl": "impl", "seed": "7"},
                summary="3 examples, 40 steps",
            )
        )
        props = {p.get("name"): p.get("value") for p in root.iter("property")}
        assert props == {"impl": "impl", "seed": "7"}
        assert root.findtext("testsuite/testcase/system-out") == "3 examples, 40 steps"

    def test_markup_in_messages_is_escaped(self) -> None:
        """Angle brackets and quotes in a message survive a round trip through XML."""
        message = 'expected <none> & "x"'
        root = parse(JUnitCase(suite="s", name="n", seconds=0.0, failure=message))
        failure = root.find("testsuite/testcase/failure")
        assert failure is not None
        assert failure.get("message") == message

    def test_output_holds_summary_details_and_attachments(self, tmp_path: Path) -> None:
        """The testcase's system-out: summary, then details, then each attachment's line."""
        trace = tmp_path / "t.json"
        root = parse(
            JUnitCase(
                suite="s",
                name="n",
                seconds=0.0,
                failure="step 1 (observe): pod_count: expected (spec) 1, actual (x) 2",
                details="trace: t.json\nnext:\n  kcache replay t.json --impl x",
                summary="2 examples",
                attachments=(trace,),
            )
        )
        assert root.findtext("testsuite/testcase/system-out") == (
            "2 examples\ntrace: t.json\nnext:\n  kcache replay t.json --impl x\n"
            f"[[ATTACHMENT|{trace}]]"
        )

    def test_an_error_is_not_a_failure(self) -> None:
        """kcache could not run: an error element, counted as an error."""
        root = parse(JUnitCase(suite="s", name="n", seconds=0.0, error="kcache could not run: x"))
        assert (root.get("errors"), root.get("failures")) == ("1", "0")
        suite = root.find("testsuite")
        assert suite is not None
        assert (suite.get("errors"), suite.get("failures")) == ("1", "0")
        assert root.find("testsuite/testcase/failure") is None
        error = root.find("testsuite/testcase/error")
        assert error is not None
        assert error.get("message") == "kcache could not run: x"

    def test_document_declares_xml(self) -> None:
        """The document starts with an XML declaration, as JUnit readers expect."""
        assert junit_xml(JUnitCase(suite="s", name="n", seconds=0.0)).startswith("<?xml")


def test_write_junit_creates_the_folder(tmp_path: Path) -> None:
    """Writing into a folder that does not exist yet creates it."""
    path = tmp_path / "reports" / "kcache.xml"
    write_junit(path, JUnitCase(suite="s", name="n", seconds=0.0))
    assert ET.parse(path).getroot().tag == "testsuites"
