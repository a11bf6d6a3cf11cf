"""An installed kcache keeps to its own namespace and leaves other projects alone.

The repository keeps `spec/` and `impl/` at its top; the wheel maps them to
`kcache.spec` and `kcache.impl`, so a user's own `spec` or `impl` package is
never shadowed, and the pytest plugin stays inert in a suite that does not ask
for it.  Checked on a real wheel, installed (with its dependencies, from the
package index) into a fresh virtual environment outside the checkout.
"""

from __future__ import annotations

import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest
from helpers.paths import ROOT

DISTRIBUTION = "kcache_conformance"

#: a project of a user's, with packages named like the repository's folders
THROWAWAY_PROJECT = {
    "spec/__init__.py": "MEANING = 'the project under test'\n",
    "impl/__init__.py": "from spec import MEANING\n",
    "tests/test_mine.py": (
        "import impl\nimport spec\n\n"
        "def test_my_packages_are_mine():\n"
        "    assert spec.MEANING == impl.MEANING == 'the project under test'\n"
    ),
}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    command = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(out), "."]
    subprocess.run(command, cwd=ROOT, check=True, capture_output=True)
    (built,) = out.glob(f"{DISTRIBUTION}-*.whl")
    return built


@pytest.fixture(scope="module")
def python(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The interpreter of a fresh venv with the wheel (and pytest) installed."""
    home = tmp_path_factory.mktemp("venv")
    venv.EnvBuilder(with_pip=True).create(home)
    interpreter = home / "bin" / "python"
    install = [str(interpreter), "-m", "pip", "install", "--quiet", f"{wheel}[test]"]
    subprocess.run(install, cwd=home, check=True, capture_output=True)
    return interpreter


def run(python: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(python), *args], cwd=cwd, capture_output=True, text=True, check=False
    )


def test_the_wheel_has_one_top_level_package(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names if not name.startswith(f"{DISTRIBUTION}-")}
    assert tops == {"kcache"}
    assert "kcache/spec/cache.py" in names
    assert "kcache/impl/cache.py" in names


def test_spec_and_impl_are_not_top_level_modules(python: Path, tmp_path: Path) -> None:
    done = run(python, tmp_path, "-c", "import spec")
    assert done.returncode == 1
    assert "ModuleNotFoundError: No module named 'spec'" in done.stderr
    assert run(python, tmp_path, "-c", "import impl").returncode == 1
    loaded = run(python, tmp_path, "-c", "import kcache.spec.cache, kcache.impl.cache")
    assert loaded.returncode == 0, loaded.stderr


def test_the_command_runs_from_the_installed_package(python: Path, tmp_path: Path) -> None:
    done = run(python, tmp_path, "-m", "kcache", "conform", "--impl", "impl", "--max-examples", "3")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("PASS impl conforms to the spec (v1.37): ")


def test_a_project_with_its_own_spec_and_impl_runs_its_suite(python: Path, tmp_path: Path) -> None:
    for relative, text in THROWAWAY_PROJECT.items():
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    done = run(python, tmp_path, "-m", "pytest", "-q", "-p", "no:cacheprovider")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout
    assert "kcache-conformance[" not in done.stdout
