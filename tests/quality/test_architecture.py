"""docs/architecture.md names every Python module of the project, and only modules that exist.

The page's tables give each module a row (`spec/errors.py`) or a package a
row (`kcache/machine/`) whose text names the package's modules by file name
(`rules.py`, `adapter/client.py`).  A package's `__init__.py` counts as a
module only when it holds code beyond its docstring.  A module added without
a word on the page fails here by path; so does a name the page keeps after
the module was moved or removed.  Only Python modules are checked: the Go
adapter's files are left to adapters/go/README.md.
"""

from __future__ import annotations

import ast
import re
import subprocess

import pytest
from helpers.paths import DOCS, ROOT

PAGE = DOCS / "architecture.md"
#: the folders whose modules the page describes
PACKAGES = ("spec", "impl", "kcache", "adapters", "benchmarks")
#: a table row: its first cell and the rest
_ROW = re.compile(r"^\|\s*`(?P<path>[^`]+)`\s*\|(?P<rest>.*)\|\s*$")
#: a module named in backticks: a path ending in .py
_MODULE = re.compile(r"`([\w./-]+\.py)`")


def holds_code(path: str) -> bool:
    """Whether a module has statements beyond its docstring."""
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    return any(
        not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))
        for node in tree.body
    )


def project_modules() -> set[str]:
    """Every Python module git knows of under the described folders, empty `__init__.py` aside."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z", "--", *PACKAGES],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    return {
        name
        for name in filter(None, listed.split("\0"))
        if name.endswith(".py")
        and (ROOT / name).is_file()
        and (not name.endswith("__init__.py") or holds_code(name))
    }


def named_modules(page: str) -> set[str]:
    """The module paths the page names: full paths anywhere, and file names in a package's row."""
    named = set(_MODULE.findall(page))
    for line in page.splitlines():
        row = _ROW.match(line)
        if row is not None and row.group("path").endswith("/"):
            package = row.group("path")
            named |= {
                name if name.startswith(PACKAGES) else package + name
                for name in _MODULE.findall(row.group("rest"))
            }
    return {name for name in named if name.startswith(tuple(f"{p}/" for p in PACKAGES))}


@pytest.mark.parametrize(
    ("page", "expected"),
    [
        ("| `spec/errors.py` | errors |", {"spec/errors.py"}),
        (
            "| `kcache/machine/` | rules (`rules.py`), `pod_group_rules.py` |",
            {"kcache/machine/rules.py", "kcache/machine/pod_group_rules.py"},
        ),
        (
            "| `kcache/targets/` | ends (`adapter/client.py`) |",
            {"kcache/targets/adapter/client.py"},
        ),
        ("the tests (`tests/helpers/browser.py`) and `rules.py` in prose", set()),
    ],
)
def test_the_page_is_read_as_written(page: str, expected: set[str]) -> None:
    """Rows name modules by path or, in a package's row, by file name; prose needs a full path."""
    assert named_modules(page) == expected


def test_every_module_is_on_the_page() -> None:
    missing = sorted(project_modules() - named_modules(PAGE.read_text(encoding="utf-8")))
    assert missing == [], f"docs/architecture.md does not mention: {missing}"


def test_every_module_on_the_page_exists() -> None:
    named = named_modules(PAGE.read_text(encoding="utf-8"))
    gone = sorted(name for name in named if not (ROOT / name).is_file())
    assert gone == [], f"docs/architecture.md names modules that do not exist: {gone}"


def test_every_package_row_names_a_folder() -> None:
    rows = [_ROW.match(line) for line in PAGE.read_text(encoding="utf-8").splitlines()]
    folders = [row.group("path") for row in rows if row and row.group("path").endswith("/")]
    assert "kcache/machine/" in folders
    assert [folder for folder in folders if not (ROOT / folder).is_dir()] == []
