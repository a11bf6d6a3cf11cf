"""Tests for `kcache.pytest_plugin`, run in throwaway pytest processes with pytester.

Subprocesses, not in-process runs: pytester unloads the modules a run imported,
which splits kcache's exception classes between two copies of its modules.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

pytest_plugins = ["pytester"]

#: a seeded bug the machine catches within a few dozen examples
BUG = "kcache.seeded.bugs:ZeroRequestsDefaulted"

USER_TEST = """
def test_users_own_test():
    assert True
"""


@pytest.fixture
def user_project(pytester: pytest.Pytester) -> pytest.Pytester:
    """A project with one test of its own, run in a fresh folder."""
    pytester.makepyfile(test_users=USER_TEST)
    return pytester


def test_inert_without_the_option(user_project: pytest.Pytester) -> None:
    """Without --kcache-impl, a user's run is exactly their own tests."""
    result = user_project.runpytest_subprocess()
    result.assert_outcomes(passed=1)
    assert (
        "kcache-conformance[" not in result.stdout.str()
    )  # no item; the plugin line names the distribution


def test_the_item_is_counted_as_collected(pytester: pytest.Pytester) -> None:
    """A project with no tests of its own: "collected 1 item", then "1 passed"."""
    result = pytester.runpytest_subprocess("--kcache-impl", "impl", "--kcache-max-examples", "2")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["collected 1 item"])
    assert "collected 0 items" not in result.stdout.str()


def test_the_item_is_counted_beside_the_users_tests(user_project: pytest.Pytester) -> None:
    result = user_project.runpytest_subprocess("--kcache-impl", "impl", "-k", "users_own")
    result.stdout.fnmatch_lines(["collected 2 items / 1 deselected / 1 selected"])
    result.assert_outcomes(passed=1, deselected=1)


def test_options_are_documented(user_project: pytest.Pytester) -> None:
    """pytest --help lists the plugin's options under their own heading."""
    result = user_project.runpytest_subprocess("--help")
    result.stdout.fnmatch_lines(["kcache conformance:", "*--kcache-impl=TARGET*"])


def test_impl_passes(user_project: pytest.Pytester) -> None:
    """--kcache-impl impl adds one passing item beside the user's tests."""
    result = user_project.runpytest_subprocess(
        "--kcache-impl", "impl", "--kcache-max-examples", "3", "-v"
    )
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*kcache-conformance?impl? PASSED*"])


def test_users_hypothesis_profile_is_left_alone(pytester: pytest.Pytester) -> None:
    """After the conformance item ran, the user's own Hypothesis profile is still loaded."""
    pytester.makeconftest(
        "from hypothesis import settings\n"
        "settings.register_profile('users', max_examples=7)\n"
        "settings.load_profile('users')\n"
        "def pytest_collection_modifyitems(items):\n"
        "    # the conformance item first, so that the user's test runs after it\n"
        "    items.sort(key=lambda item: not item.name.startswith('kcache-conformance'))\n"
    )
    pytester.makepyfile(
        test_users="from hypothesis import settings\n"
        "def test_profile_after_kcache():\n"
        "    assert settings.default.max_examples == 7\n"
    )
    result = pytester.runpytest_subprocess("--kcache-impl", "impl", "--kcache-max-examples", "2")
    result.assert_outcomes(passed=2)


def test_item_can_be_deselected(user_project: pytest.Pytester) -> None:
    """-k selects items as usual, the conformance item included."""
    result = user_project.runpytest_subprocess("--kcache-impl", "impl", "-k", "users_own")
    result.assert_outcomes(passed=1, deselected=1)


def test_seeded_bug_fails_with_its_trace(user_project: pytest.Pytester) -> None:
    """A seeded bug fails the item; the report names the trace, which is written."""
    result = user_project.runpytest_subprocess(
        "--kcache-impl", BUG, "--kcache-max-examples", "300", "--kcache-seed", "6"
    )
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            f"*{BUG} diverges from the spec (v1.37)*seed 6*",
            "trace: kcache-failures/*.json",
            "replay shows it at step *",
            f"  kcache replay kcache-failures/*.json --impl {BUG}",
            f"  kcache explain kcache-failures/*.json --impl {BUG}",
        ]
    )
    (trace,) = (user_project.path / "kcache-failures").glob("*.json")
    assert trace.read_text(encoding="utf-8").startswith('{"name":')


def test_unknown_target_fails_the_item_in_one_line(user_project: pytest.Pytester) -> None:
    """A target kcache cannot build fails the item with kcache's one-line message."""
    result = user_project.runpytest_subprocess("--kcache-impl", "nonsense")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["kcache could not run: --impl nonsense: unknown target*"])
    assert "Traceback" not in result.stdout.str()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--kcache-max-examples", "0"], "*--kcache-max-examples must be at least 1, got 0*"),
        (["--kcache-release", "v9"], "*--kcache-release: invalid choice: 'v9'*"),
    ],
)
def test_bad_options_are_usage_errors(
    user_project: pytest.Pytester, argv: list[str], message: str
) -> None:
    """Bad plugin options stop the run before collection, as pytest usage errors."""
    result = user_project.runpytest_subprocess("--kcache-impl", "impl", *argv)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_run_figures_and_seed_are_recorded(user_project: pytest.Pytester) -> None:
    """The item records its figures and seed as a property, e.g. for --junitxml."""
    result = user_project.runpytest_subprocess(
        "--kcache-impl",
        "impl",
        "--kcache-max-examples",
        "2",
        "--kcache-seed",
        "5",
        "--junitxml",
        "report.xml",
    )
    result.assert_outcomes(passed=2)
    report = (user_project.path / "report.xml").read_text(encoding="utf-8")
    assert 'name="kcache"' in report
    assert " examples, " in report and " steps, " in report
    assert "seed 5 (--kcache-seed 5 repeats it)" in report


def test_an_unwritable_out_folder_fails_the_item_before_the_run(
    user_project: pytest.Pytester,
) -> None:
    """--kcache-out naming a file: the item fails at once saying so, with no traceback,
    where the run used to find its failure and then die writing it."""
    user_project.makefile(".txt", taken="not a folder")
    result = user_project.runpytest_subprocess(
        "--kcache-impl", BUG, "--kcache-out", "taken.txt", "--kcache-max-examples", "300"
    )
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        ["*kcache could not run: --kcache-out taken.txt: *taken.txt is a file, not a folder*"]
    )
    assert "Traceback" not in result.stdout.str()
    assert "diverges from the spec" not in result.stdout.str()


@pytest.mark.parametrize("family", ["xunit2", "xunit1"])
def test_the_junit_report_keeps_to_its_family(user_project: pytest.Pytester, family: str) -> None:
    """xunit2 (pytest's default, Jenkins' schema) allows properties on suites only."""
    result = user_project.runpytest_subprocess(
        *("--kcache-impl", "impl", "--kcache-max-examples", "2", "--kcache-seed", "5"),
        *("--junitxml", "report.xml", "-o", f"junit_family={family}"),
    )
    result.assert_outcomes(passed=2)
    root = ET.parse(user_project.path / "report.xml").getroot()
    item = next(
        case for case in root.iter("testcase") if case.get("name") == "kcache-conformance[impl]"
    )
    on_case = [prop.get("name") for prop in item.iter("property")]
    on_suite = [prop.get("name") for prop in root.findall("testsuite/properties/property")]
    if family == "xunit2":
        assert (on_case, on_suite) == ([], ["kcache"])
    else:
        assert (on_case, on_suite) == (["kcache"], [])
