"""Tests for `kcache.targets.go`, with a stand-in `go` command.

The stand-in records its arguments and answers as the real toolchain would,
so building, reusing and failing are checked without Go or the network; the
real build is exercised by `tox -e go`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from kcache.errors import TargetError
from kcache.targets import go as go_adapter

FAKE_GO = f"""#!{sys.executable}
import json, os, pathlib, sys
args = sys.argv[1:]
with open(os.environ["FAKE_GO_LOG"], "a") as log:
    log.write(" ".join(args) + "\\n")
if args[:2] == ["env", "GOVERSION"]:
    print(os.environ.get("FAKE_GO_VERSION", "go1.99.0"))
elif args[:2] == ["mod", "download"]:
    print(json.dumps({{"Dir": os.environ["FAKE_GO_MODULE"]}}))
elif args[0] in ("build", "test") and os.environ.get("FAKE_GO_FAIL"):
    sys.stderr.write("".join(f"compile error {{i}}\\n" for i in range(30)))
    sys.exit(1)
elif args[0] == "build":
    pathlib.Path(args[args.index("-o") + 1]).write_text("a binary")
elif args[0] == "test":
    print("ok  kcache/goadapter")
"""


@pytest.fixture
def toolchain(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A stand-in `go` on PATH, adapter sources and an upstream module; returns the log."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    go = bin_dir / "go"
    go.write_text(FAKE_GO)
    go.chmod(0o755)
    source = tmp_path / "adapter"
    for name in (
        "go.mod",
        "v1.36.mod",
        "main.go",
        "README.md",
        "main_test.go",
        "_overlay/snapshot_access.go",
        "_overlay/v1.35/unstarted.go",
        "_overlay/v1.36/unstarted.go",
        "_overlay/v1.37/snapshot_access.go",
    ):
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        (source / name).write_text(f"// {name}\n")
    upstream = tmp_path / "module" / "k8s.io" / "kubernetes@v1.35.8"
    package = upstream / go_adapter.UPSTREAM_PACKAGE
    package.mkdir(parents=True)
    for name in ("cache.go", "snapshot.go", "cache_test.go"):
        (package / name).write_text(f"// upstream {name}\n")
    log = tmp_path / "go.log"
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setenv("FAKE_GO_LOG", str(log))
    monkeypatch.setenv("FAKE_GO_MODULE", str(upstream))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(go_adapter, "SOURCE", source)
    return log


def go_calls(log: Path, command: str) -> list[str]:
    """The recorded `go COMMAND ...` argument lines."""
    return [line for line in log.read_text().splitlines() if line.split()[0] == command]


class TestBuild:
    def test_builds_into_the_cache_directory_with_the_release_settings(
        self, toolchain: Path, tmp_path: Path
    ) -> None:
        """The v1.36 build uses its module file and build tag and lands under XDG_CACHE_HOME."""
        binary = go_adapter.build("v1.36")
        assert binary.read_text() == "a binary"
        assert binary.parent.parent == tmp_path / "cache" / "kcache" / "go-adapter"
        assert binary.parent.name.startswith("v1.36-")
        [build] = go_calls(toolchain, "build")
        assert "-modfile=v1.36.mod" in build.split()
        assert "-tags=kcache_v136" in build.split()

    def test_overlay_places_upstream_sources_and_our_accessors(
        self, toolchain: Path, tmp_path: Path
    ) -> None:
        """Upstream's non-test files and the release's accessor files map into the package."""
        binary = go_adapter.build("v1.35")
        replace = json.loads((binary.parent / "overlay.json").read_text())["Replace"]
        placed = go_adapter.SOURCE / go_adapter.PLACED_PACKAGE
        upstream = tmp_path / "module" / "k8s.io" / "kubernetes@v1.35.8"
        package = upstream / go_adapter.UPSTREAM_PACKAGE
        overlay = go_adapter.SOURCE / "_overlay"
        assert replace == {
            str(placed / "cache.go"): str(package / "cache.go"),
            str(placed / "snapshot.go"): str(package / "snapshot.go"),
            str(placed / "zz_kcache_snapshot_access.go"): str(overlay / "snapshot_access.go"),
            str(placed / "zz_kcache_release_unstarted.go"): str(overlay / "v1.35" / "unstarted.go"),
        }

    def test_the_scheduler_moves_with_the_cache_importing_it_under_its_new_path(
        self, toolchain: Path, tmp_path: Path
    ) -> None:
        """A source importing the cache is mapped to a copy whose import path alone changed."""
        upstream = tmp_path / "module" / "k8s.io" / "kubernetes@v1.35.8"
        package = upstream / go_adapter.UPSTREAM_SCHEDULER
        original = (
            'package scheduler\n\nimport (\n\tinternalcache "k8s.io/kubernetes/'
            'pkg/scheduler/backend/cache"\n\t"k8s.io/kubernetes/pkg/scheduler/framework"\n)\n'
        )
        (package / "scheduler.go").write_text(original)
        (package / "extender.go").write_text("package scheduler\n")
        binary = go_adapter.build("v1.35")
        replace = json.loads((binary.parent / "overlay.json").read_text())["Replace"]
        placed = go_adapter.SOURCE / go_adapter.PLACED_SCHEDULER
        assert replace[str(placed / "extender.go")] == str(package / "extender.go")
        copy = Path(replace[str(placed / "scheduler.go")])
        assert copy.parent.is_relative_to(binary.parent)
        assert copy.read_text() == original.replace(
            '"k8s.io/kubernetes/pkg/scheduler/backend/cache"',
            '"kcache/goadapter/internal/upstreamcache"',
        )

    def test_a_release_accessor_never_replaces_a_shared_one(self, toolchain: Path) -> None:
        """v1.37 has its own snapshot_access.go beside the shared one: both are placed."""
        binary = go_adapter.build("v1.37")
        replace = json.loads((binary.parent / "overlay.json").read_text())["Replace"]
        placed = go_adapter.SOURCE / go_adapter.PLACED_PACKAGE
        overlay = go_adapter.SOURCE / "_overlay"
        assert replace[str(placed / "zz_kcache_snapshot_access.go")] == str(
            overlay / "snapshot_access.go"
        )
        assert replace[str(placed / "zz_kcache_release_snapshot_access.go")] == str(
            overlay / "v1.37" / "snapshot_access.go"
        )

    def test_an_identical_build_is_reused(self, toolchain: Path) -> None:
        """A second request for the same sources and Go version runs no build."""
        first = go_adapter.build("v1.35")
        assert go_adapter.build("v1.35") == first
        assert len(go_calls(toolchain, "build")) == 1

    def test_a_source_change_builds_afresh_and_a_readme_change_does_not(
        self, toolchain: Path
    ) -> None:
        """The fingerprint covers Go sources and module files, not prose or Go tests."""
        first = go_adapter.build("v1.35")
        (go_adapter.SOURCE / "README.md").write_text("edited\n")
        (go_adapter.SOURCE / "main_test.go").write_text("// edited\n")
        assert go_adapter.build("v1.35") == first
        (go_adapter.SOURCE / "main.go").write_text("// edited\n")
        assert go_adapter.build("v1.35") != first

    def test_a_new_go_version_builds_afresh(
        self, toolchain: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The toolchain version is part of the fingerprint."""
        first = go_adapter.build("v1.35")
        monkeypatch.setenv("FAKE_GO_VERSION", "go1.99.1")
        assert go_adapter.build("v1.35") != first

    def test_a_failed_build_names_the_command_and_quotes_its_last_lines(
        self, toolchain: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
    ) -> None:
        """One summary line, then the end of the compiler's output, and no binary."""
        monkeypatch.setenv("FAKE_GO_FAIL", "1")
        with pytest.raises(TargetError) as raised:
            go_adapter.build("v1.35")
        summary, *quoted = str(raised.value).splitlines()
        assert summary.startswith("--impl go:v1.35: `go build -modfile=go.mod")
        assert "failed (exit 1)" in summary
        assert quoted == [f"  compile error {i}" for i in range(15, 30)]
        assert not list((tmp_path / "cache").rglob("goadapter"))

    def test_missing_go_is_a_one_line_error(
        self, toolchain: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
    ) -> None:
        """Without `go` on PATH the user is told what to install."""
        monkeypatch.setenv("PATH", str(tmp_path / "empty"))
        with pytest.raises(TargetError, match=r"Go toolchain is not on PATH") as raised:
            go_adapter.build("v1.35")
        assert "\n" not in str(raised.value)

    def test_an_unknown_release_is_refused(self, toolchain: Path) -> None:
        """Only the pinned releases have builds."""
        with pytest.raises(TargetError, match=r"go:v1\.99: no Go adapter build \(known: v1.35"):
            go_adapter.build("v1.99")


def test_factory_runs_the_built_binary(toolchain: Path) -> None:
    """The factory is the adapter client over `cmd:<binary>`, not yet started."""
    factory = go_adapter.factory("v1.35")
    assert factory.argv == (str(go_adapter.build("v1.35")),)


def test_test_runs_go_test_with_the_build_flags(toolchain: Path) -> None:
    """`test` uses the same module file, tags and overlay as the build."""
    assert go_adapter.test("v1.36").strip() == "ok  kcache/goadapter"
    [run] = go_calls(toolchain, "test")
    assert run.split()[1:3] == ["-modfile=v1.36.mod", "-tags=kcache_v136"]
    assert run.split()[3].endswith("overlay.json")


class TestMain:
    def test_build_prints_the_binary(
        self, toolchain: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """`python -m kcache.targets.go build v1.36` prints the path and exits 0."""
        assert go_adapter.main(["build", "v1.36"]) == 0
        assert capsys.readouterr().out.strip() == str(go_adapter.build("v1.36"))

    def test_errors_are_one_line_and_exit_2(
        self, toolchain: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A bad command or release is a message, never a traceback."""
        assert go_adapter.main(["frobnicate"]) == 2
        assert capsys.readouterr().err.startswith("usage: python -m kcache.targets.go")
        assert go_adapter.main(["build", "v1.99"]) == 2
        assert capsys.readouterr().err.startswith("kcache: --impl go:v1.99: no Go adapter build")
