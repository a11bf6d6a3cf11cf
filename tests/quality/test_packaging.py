"""An installed kcache keeps to its own namespace, leaves other projects alone, and is whole.

The repository keeps `spec/` and `impl/` at its top; the wheel maps them to
`kcache.spec` and `kcache.impl`, so a user's own `spec` or `impl` package is
never shadowed, and the pytest plugin stays inert in a suite that does not ask
for it.  The wheel carries the Go adapter's sources, the vectors, the trace
format and its schema, and the example cluster, so `--impl go`, `kcache
replay --vectors` and `kcache show --example` work after a plain `pip
install`.  Checked on a real wheel, installed (with its dependencies, from
the package index) into a fresh virtual environment outside the checkout.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest
from helpers.paths import ROOT, VECTORS

DISTRIBUTION = "kcache_conformance"

#: the wheel and its venv are made once, on one pytest-xdist worker (tox: --dist loadgroup)
pytestmark = pytest.mark.xdist_group("packaging")

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


def run(
    python: Path, cwd: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(python), *args], cwd=cwd, capture_output=True, text=True, check=False, env=env
    )


def kcache(
    python: Path, cwd: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the `kcache` console script the wheel installed beside the venv's interpreter."""
    return subprocess.run(
        [str(python.parent / "kcache"), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        env=env,
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


def test_the_wheel_carries_the_adapter_vectors_and_format(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    bundled = "kcache/bundled/"
    for part in (
        "go-adapter/go.mod",
        "go-adapter/v1.37.mod",
        "go-adapter/main.go",
        "go-adapter/_overlay/pvc_ref_counts.go",
        "go-adapter/internal/upstreamcache/doc.go",
        "vectors/TestDump.jsonl",
        "vectors/machine/ForgetPod.jsonl",
        "trace-format.md",
        "trace.schema.json",
        "example-cluster.yaml",
    ):
        assert bundled + part in names
    # copies, not links: every vector of the checkout is there
    vectors = {path.relative_to(VECTORS).as_posix() for path in VECTORS.rglob("*.jsonl")}
    shipped = {name.removeprefix(bundled + "vectors/") for name in names}
    assert vectors <= shipped


def test_version(python: Path, tmp_path: Path) -> None:
    done = kcache(python, tmp_path, "--version")
    assert (done.returncode, done.stdout) == (0, "kcache 0.1.0\n")


def test_the_example_cluster_shows(python: Path, tmp_path: Path) -> None:
    """A wheel user has the cluster of docs/getting-started.md to try `kcache show` on."""
    done = kcache(python, tmp_path, "show", "--example", "--impl", "spec", "--impl", "impl")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "read 1 input(s): 3 nodes, 7 pods (5 added, 2 left out)"
    assert lines[-1] == "AGREE spec, impl: same outcomes, nodes and snapshot"


def test_the_bundled_vectors_replay(python: Path, tmp_path: Path) -> None:
    done = kcache(python, tmp_path, "replay", "--vectors", "--impl", "spec")
    assert done.returncode == 0, done.stdout + done.stderr
    count = len(
        [line for path in VECTORS.rglob("*.jsonl") for line in path.read_text().split("\n") if line]
    )
    assert done.stdout.splitlines()[-1] == f"{count} passed, 0 failed, 0 skipped"


@pytest.mark.skipif(shutil.which("go") is None, reason="needs the Go toolchain")
def test_the_go_adapter_builds_from_the_installed_sources(python: Path, tmp_path: Path) -> None:
    """A fresh adapter build folder, so the binary comes from the wheel's copy of adapters/go.

    Go's own build cache is kept (GOCACHE), or the build would recompile the
    standard library and Kubernetes from scratch.
    """
    gocache = subprocess.run(
        ["go", "env", "GOCACHE"], capture_output=True, text=True, check=True
    ).stdout.strip()
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "GOCACHE": gocache}
    trace = VECTORS / "TestDump.jsonl"
    done = kcache(python, tmp_path, "replay", str(trace), "--impl", "go:v1.35", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1] == "1 passed, 0 failed, 0 skipped"
    assert "building the Go adapter for v1.35" in done.stderr
    (built,) = (tmp_path / "cache" / "kcache" / "go-adapter").glob("v1.35-*/goadapter")
    assert built.is_file()
