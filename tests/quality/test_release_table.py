"""One release mechanism: code asks for behaviours, and only spec/releases.py names versions.

CONTRIBUTING.md's "Adding a release" recipe rests on these: a release is a row
of `spec.releases`, its behaviours are flags with docs, and everything that
differs by release (Python code, tables, the Go adapter's files) is chosen by
flag, so nothing outside the table needs a new version spelled.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import attrs
import pytest

from kcache.impl.scheduling import plugins as impl_plugins
from kcache.spec.releases import GO_TAG_PREFIX, RELEASES, Release, flag_names
from kcache.spec.scheduler import plugins as spec_plugins
from kcache.spec.scheduler.config import MODELLED
from kcache.targets import go as go_adapter

ROOT = Path(__file__).resolve().parents[2]
#: the one module allowed to name releases and upstream versions as values
TABLE = ROOT / "spec" / "releases.py"
PYTHON = sorted(
    path for folder in ("spec", "impl", "kcache") for path in (ROOT / folder).rglob("*.py")
)
GO = sorted((ROOT / "adapters" / "go").rglob("*.go"))
#: a release name or upstream version as a whole value: v1.37, v1.36.3, v1.38.0-beta.0
VERSION = re.compile(r"v\d+\.\d+(\.\d+)?(-[0-9A-Za-z.]+)?")
#: a Go build constraint, and the tags it names
BUILD_LINE = re.compile(r"^//go:build (.+)$", re.MULTILINE)
TAG = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: a Go string literal
GO_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"|`[^`]*`')


def _version_values(path: Path) -> list[str]:
    """Every string constant of `path` that is a version, docstrings left out (prose)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    documents = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
    }
    return [
        f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in documents
        and VERSION.fullmatch(node.value)
    ]


def test_no_python_outside_the_table_holds_a_version_as_a_value() -> None:
    """spec/, impl/ and kcache/ compare no version: `since(release, "v1.37")`, a key
    "v1.37" or `release.name == "v1.36"` would each show as a constant here."""
    found = [line for path in PYTHON if path != TABLE for line in _version_values(path)]
    assert found == []


def test_the_table_does_hold_versions() -> None:
    """The check above looks where versions are: the table itself holds them."""
    assert len(_version_values(TABLE)) >= 2 * len(RELEASES)


def test_no_go_source_holds_a_version_as_a_value() -> None:
    """The adapter learns its release's name at link time (-ldflags -X main.release)."""
    found = [
        f"{path.relative_to(ROOT)}: {literal}"
        for path in GO
        for literal in GO_STRING.findall(path.read_text(encoding="utf-8"))
        if VERSION.fullmatch(literal.strip('"`'))
    ]
    assert found == []


@functools.cache
def _go_tags() -> dict[str, list[str]]:
    """Each build tag the adapter's Go files name, with the files naming it."""
    tags: dict[str, list[str]] = {}
    for path in GO:
        for constraint in BUILD_LINE.findall(path.read_text(encoding="utf-8")):
            for tag in TAG.findall(constraint):
                tags.setdefault(tag, []).append(path.relative_to(ROOT).as_posix())
    return tags


def test_every_go_build_tag_names_a_behaviour_of_the_table() -> None:
    """kcache_<flag> for a flag of Release (and `tools`, the dependency record)."""
    behaviours = {GO_TAG_PREFIX + name for name in flag_names()}
    strays = {tag: files for tag, files in _go_tags().items() if tag not in behaviours | {"tools"}}
    assert strays == {}


@pytest.mark.parametrize("flag", flag_names())
def test_every_flag_is_documented_and_used(flag: str) -> None:
    """A flag has its doc (flag_names requires one), and code outside the table reads it:
    by name in spec/, impl/ or kcache/, or as a Go build tag."""
    assert getattr(attrs.fields(Release), flag).metadata["doc"].strip()
    name = re.compile(rf"\b{flag}\b")
    readers = [path for path, text in _python_sources().items() if name.search(text)]
    assert readers or GO_TAG_PREFIX + flag in _go_tags()


@functools.cache
def _python_sources() -> dict[Path, str]:
    """The text of every Python file outside the table."""
    return {path: path.read_text(encoding="utf-8") for path in PYTHON if path != TABLE}


@pytest.mark.parametrize("release", RELEASES.values(), ids=list(RELEASES))
def test_every_release_has_its_committed_go_pin(release: Release) -> None:
    """adapters/go holds a module file requiring the version the release was checked
    against (pin.sh writes it), so go:RELEASE builds without the network's say."""
    modfile = go_adapter.SOURCE / go_adapter.pinned_modfile(release)
    assert modfile.with_suffix(".sum").is_file()


def test_spec_impl_and_the_configuration_model_the_same_plugins() -> None:
    """The plugin recipe's steps 1 and 3: a plugin is in `MODELLED`, the spec's
    registry and impl's, or in none."""
    assert set(spec_plugins.PLUGINS) == set(MODELLED) == set(impl_plugins.PLUGINS)


@pytest.mark.parametrize("plugin", sorted(MODELLED))
def test_every_plugin_has_its_unit_tests_and_a_vector(plugin: str) -> None:
    """The plugin recipe's step 4: named in the spec's plugin tests and in a vector."""
    tests = (ROOT / "tests" / "unit" / "spec" / "test_scheduler_plugins.py").read_text("utf-8")
    vectors = (ROOT / "tests" / "vectors" / "scheduling").glob("*.jsonl")
    assert plugin in tests
    assert any(plugin in vector.read_text(encoding="utf-8") for vector in vectors)
