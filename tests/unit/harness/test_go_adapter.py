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
with open(os.environ["FAKE_GO_LOG"] + ".toolchains", "a") as log:
    log.write(os.environ.get("GOTOOLCHAIN", "unset") + "\\n")
if args[:2] == ["env", "GOVERSION"]:
    print(os.environ.get("FAKE_GO_VERSION", "go1.99.0"))
elif args[:2] == ["mod", "download"] and args[-1].endswith("@v1.35.9"):
    print(json.dumps({{"Error": "k8s.io/kubernetes@v1.35.9: 403 Forbidden"}}))
    sys.exit(1)
elif args[:2] == ["mod", "download"]:
    module = pathlib.Path(os.environ["FAKE_GO_MODULE"])
    print(json.dumps({{"Dir": str(module), "GoMod": str(module / "go.mod")}}))
elif args[0] in ("build", "test") and os.environ.get("FAKE_GO_FAIL"):
    sys.stderr.write("".join(f"compile error {{i}}\\n" for i in range(30)))
    sys.exit(1)
elif args[0] == "build":
    pathlib.Path(args[args.index("-o") + 1]).write_text("a binary")
elif args[0] == "test":
    print("ok  kcache/goadapter")
"""


#: how k8s.io/kubernetes's go.mod points its staging modules at its own tree
STAGING_GO_MOD = """// This is a generated file. Do not edit directly.

module k8s.io/kubernetes

replace (
\tk8s.io/api => ./staging/src/k8s.io/api
\tk8s.io/client-go => ./staging/src/k8s.io/client-go
)
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
        "go.sum",
        "v1.36.sum",
        "v1.37.sum",
        "v1.38.sum",
        "main.go",
        "README.md",
        "main_test.go",
        "_overlay/snapshot_access.go",
        "_overlay/unstarted_expiry.go",
        "_overlay/pvc_ref_counts.go",
    ):
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        (source / name).write_text(f"// {name}\n")
    pins = (("go.mod", "v1.35.8"), ("v1.36.mod", "v1.36.0"), ("v1.37.mod", "v1.37.2"))
    for name, version in pins:
        (source / name).write_text(f"module goadapter\n\nrequire k8s.io/kubernetes {version}\n")
    # a release whose go.mod asks for a newer Go: pin.sh records the toolchain it pinned with
    (source / "v1.38.mod").write_text(
        "module goadapter\n\ngo 1.27.0\n\ntoolchain go1.27.3\n\n"
        "require k8s.io/kubernetes v1.38.0-beta.0\n"
    )
    upstream = tmp_path / "module" / "k8s.io" / "kubernetes@v1.35.8"
    package = upstream / go_adapter.UPSTREAM_PACKAGE
    package.mkdir(parents=True)
    for name in ("cache.go", "snapshot.go", "cache_test.go"):
        (package / name).write_text(f"// upstream {name}\n")
    (upstream / "go.mod").write_text(STAGING_GO_MOD)
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
        """The v1.36 build uses the module file pinning v1.36.0, the tags of v1.36's
        behaviours and its name, and lands under XDG_CACHE_HOME."""
        binary = go_adapter.build("v1.36")
        assert binary.read_text() == "a binary"
        assert binary.parent.parent == tmp_path / "cache" / "kcache" / "go-adapter"
        assert binary.parent.name.startswith("v1.36-")
        [build] = go_calls(toolchain, "build")
        words = build.split()
        assert "-modfile=v1.36.mod" in words
        [tags] = [word.removeprefix("-tags=") for word in words if word.startswith("-tags=")]
        assert {"kcache_has_get_node", "kcache_has_pod_groups"} <= set(tags.split(","))
        assert not {"kcache_has_expiry", "kcache_has_pod_group_objects"} & set(tags.split(","))
        assert words[words.index("-ldflags=-X") + 1] == "main.release=v1.36"

    def test_overlay_places_upstream_sources_and_our_accessors(
        self, toolchain: Path, tmp_path: Path
    ) -> None:
        """Upstream's non-test files and every accessor file map into the package (their
        build tags choose the release's)."""
        binary = go_adapter.build("v1.35")
        replace = json.loads((binary.parent / "overlay.json").read_text())["Replace"]
        placed = go_adapter.SOURCE / go_adapter.PLACED_PACKAGE
        upstream = tmp_path / "module" / "k8s.io" / "kubernetes@v1.35.8"
        package = upstream / go_adapter.UPSTREAM_PACKAGE
        overlay = go_adapter.SOURCE / "_overlay"
        assert replace == {
            str(placed / "cache.go"): str(package / "cache.go"),
            str(placed / "snapshot.go"): str(package / "snapshot.go"),
            str(placed / "zz_kcache_pvc_ref_counts.go"): str(overlay / "pvc_ref_counts.go"),
            str(placed / "zz_kcache_snapshot_access.go"): str(overlay / "snapshot_access.go"),
            str(placed / "zz_kcache_unstarted_expiry.go"): str(overlay / "unstarted_expiry.go"),
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

    def test_a_pin_naming_a_toolchain_runs_every_go_command_with_it(
        self, toolchain: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """v1.38's module file says `toolchain go1.27.3`, so `go:v1.38` just works: every
        go command of its build runs with GOTOOLCHAIN=go1.27.3, while a pin without the
        line leaves the machine's own setting."""
        monkeypatch.setenv("GOTOOLCHAIN", "local")
        toolchains = Path(f"{toolchain}.toolchains")
        go_adapter.build("v1.38")
        assert go_calls(toolchain, "build")
        assert set(toolchains.read_text().split()) == {"go1.27.3"}
        toolchains.unlink()
        go_adapter.build("v1.37")
        assert set(toolchains.read_text().split()) == {"local"}

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

    def test_a_version_no_release_describes_is_refused(self, toolchain: Path) -> None:
        """v1.99.0 belongs to no modelled line: refused before go runs."""
        with pytest.raises(TargetError, match=r"go:v1\.99\.0: no modelled release describes"):
            go_adapter.build("v1.99.0")
        assert not toolchain.exists()

    def test_a_spec_that_is_neither_release_version_nor_tree_is_refused(
        self, toolchain: Path
    ) -> None:
        """`go:v1.99` names no release, and is no version or directory."""
        with pytest.raises(TargetError, match=r"go:v1\.99: expected a release \(v1\.35, v1\.36"):
            go_adapter.build("v1.99")


class TestVersion:
    def test_a_patch_version_is_pinned_like_pin_sh_into_the_build_directory(
        self, toolchain: Path
    ) -> None:
        """v1.36.3 builds with v1.36's behaviours, from a module file generated from the
        v1.36 pin: k8s.io/kubernetes required at v1.36.3, each staging module at v0.36.3."""
        binary = go_adapter.build("v1.36.3")
        assert binary.parent.name.startswith("v1.36.3-")
        modfile = binary.parent / "adapter.mod"
        assert "k8s.io/kubernetes v1.36.0" in modfile.read_text()  # the stand-in edits nothing
        edits = [line.split()[-1] for line in go_calls(toolchain, "mod") if " edit " in line]
        assert edits == [
            "-require=k8s.io/kubernetes@v1.36.3",
            "-replace=k8s.io/api=k8s.io/api@v0.36.3",
            "-replace=k8s.io/client-go=k8s.io/client-go@v0.36.3",
        ]
        assert any(line.startswith("mod tidy -e") for line in go_calls(toolchain, "mod"))
        [build] = go_calls(toolchain, "build")
        assert f"-modfile={modfile}" in build.split()
        assert "main.release=v1.36" in build.split()

    def test_a_version_the_proxy_refuses_is_a_target_error(self, toolchain: Path) -> None:
        """The proxy's own words are quoted; nothing is built."""
        with pytest.raises(TargetError) as raised:
            go_adapter.build("v1.35.9")
        assert str(raised.value).startswith(
            "--impl go:v1.35.9: the Go module proxy does not serve k8s.io/kubernetes@v1.35.9"
        )
        assert "403 Forbidden" in str(raised.value)
        assert not go_calls(toolchain, "build")

    def test_the_pinned_version_uses_the_committed_module_file(self, toolchain: Path) -> None:
        """go:v1.36.0 is go:v1.36: the same build."""
        assert go_adapter.build("v1.36.0") == go_adapter.build("v1.36")


class TestTree:
    @pytest.fixture
    def tree(self, tmp_path: Path) -> Path:
        """A kubernetes tree: its go.mod, a v1.37 changelog and one staging module."""
        tree = tmp_path / "kubernetes"
        (tree / go_adapter.UPSTREAM_PACKAGE).mkdir(parents=True)
        (tree / go_adapter.UPSTREAM_PACKAGE / "cache.go").write_text("// the tree's\n")
        (tree / "go.mod").write_text(STAGING_GO_MOD)
        (tree / "CHANGELOG").mkdir()
        for minor in (36, 37):
            (tree / "CHANGELOG" / f"CHANGELOG-1.{minor}.md").write_text("")
        (tree / "staging" / "src" / "k8s.io" / "api").mkdir(parents=True)
        (tree / "staging" / "src" / "k8s.io" / "api" / "go.mod").write_text("module k8s.io/api\n")
        return tree

    def test_a_tree_replaces_kubernetes_and_its_staging_modules(
        self, toolchain: Path, tree: Path
    ) -> None:
        """The newest changelog names the release; the tree's staging copies replace the
        published ones it has (client-go keeps the release's pin); its sources are placed."""
        binary = go_adapter.build(str(tree))
        edits = [line.split()[-1] for line in go_calls(toolchain, "mod") if " edit " in line]
        assert edits == [
            f"-replace=k8s.io/kubernetes={tree}",
            f"-replace=k8s.io/api={tree}/staging/src/k8s.io/api",
        ]
        [build] = go_calls(toolchain, "build")
        assert "main.release=v1.37" in build.split()
        replace = json.loads((binary.parent / "overlay.json").read_text())["Replace"]
        placed = go_adapter.SOURCE / go_adapter.PLACED_PACKAGE
        upstream = tree / go_adapter.UPSTREAM_PACKAGE
        assert replace[str(placed / "cache.go")] == str(upstream / "cache.go")

    def test_a_tree_is_built_once_per_process(
        self, toolchain: Path, tree: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Its sources change between commands: go build, incremental, runs in each new
        process (here: with the record of built trees emptied), and once in one."""
        assert go_adapter.build(str(tree)) == go_adapter.build(str(tree))
        assert len(go_calls(toolchain, "build")) == 1
        monkeypatch.setattr(go_adapter, "_BUILT_TREES", set())
        go_adapter.build(str(tree))
        assert len(go_calls(toolchain, "build")) == 2
        assert len([line for line in go_calls(toolchain, "mod") if "tidy" in line]) == 1

    def test_a_named_release_overrides_the_changelog(self, toolchain: Path, tree: Path) -> None:
        """`PATH@v1.36` holds the tree to v1.36's behaviours."""
        go_adapter.build(f"{tree}@v1.36")
        [build] = go_calls(toolchain, "build")
        assert "main.release=v1.36" in build.split()

    def test_a_tree_without_a_changelog_asks_for_its_release(
        self, toolchain: Path, tree: Path
    ) -> None:
        for changelog in (tree / "CHANGELOG").iterdir():
            changelog.unlink()
        with pytest.raises(TargetError, match=r"cannot tell the tree's release.*@v1\.37"):
            go_adapter.build(str(tree))

    def test_a_tree_of_an_unmodelled_release_is_refused(self, toolchain: Path, tree: Path) -> None:
        (tree / "CHANGELOG" / "CHANGELOG-1.39.md").write_text("")
        with pytest.raises(TargetError, match=r"the tree is v1\.39 .*no modelled release"):
            go_adapter.build(str(tree))

    def test_a_directory_that_is_not_kubernetes_is_refused(
        self, toolchain: Path, tmp_path: Path
    ) -> None:
        (tmp_path / "other").mkdir()
        (tmp_path / "other" / "go.mod").write_text("module example.com/other\n")
        with pytest.raises(TargetError, match=r"does not declare `module k8s.io/kubernetes`"):
            go_adapter.build(str(tmp_path / "other"))


def test_factory_runs_the_built_binary(toolchain: Path) -> None:
    """The factory is the adapter client over `cmd:<binary>`, not yet started."""
    factory = go_adapter.factory("v1.35")
    assert factory.argv == (str(go_adapter.build("v1.35")),)


def test_test_runs_go_test_with_the_build_flags(toolchain: Path) -> None:
    """`test` uses the same module file, tags, release name and overlay as the build."""
    assert go_adapter.test("v1.36").strip() == "ok  kcache/goadapter"
    go_adapter.build("v1.36")
    [run] = go_calls(toolchain, "test")
    [build] = go_calls(toolchain, "build")
    assert run.split()[1:-1] == build.split()[1 : len(run.split()) - 1]


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
        assert go_adapter.main(["build", "v1.99.0"]) == 2
        assert capsys.readouterr().err.startswith("kcache: --impl go:v1.99.0: no modelled release")
