"""`--impl go:PATH` against a kubernetes tree: the gate in a contributor's branch.

The tree is a copy of upstream's own module source (k8s.io/kubernetes
v1.37.2 from the module cache, the files the adapter compiles: go.mod,
go.sum, pkg/ and the changelog that names its release).  Unchanged, it
conforms; with one line of its cache.go commented out, `kcache conform`
finds the bug.  The tree is built for real (Go and the module proxy, as
`tox -e go`), once whole and once more for the edited package.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from kcache.targets import go as go_adapter

#: the upstream version copied, and the module file of the adapter pinning it
UPSTREAM = "v1.37.2"
PINNED = "v1.37.mod"
#: the line seeded: UpdateNode forgets to move the node to the head of the list, so the
#: next UpdateSnapshot skips the node's change (a stale snapshot)
CORRECT = "\tcache.moveNodeInfoToHead(logger, newNode.Name)\n\n\tcache.nodeTree.updateNode("
SEEDED = "\t// cache.moveNodeInfoToHead(logger, newNode.Name)\n\n\tcache.nodeTree.updateNode("


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A writable copy of upstream's module source: what the adapter compiles, and the
    changelog from which kcache reads the tree's release."""
    download = subprocess.run(
        ["go", "mod", "download", f"-modfile={PINNED}", "-json", f"k8s.io/kubernetes@{UPSTREAM}"],
        cwd=go_adapter.SOURCE,
        capture_output=True,
        text=True,
        check=True,
    )
    module = Path(json.loads(download.stdout)["Dir"])
    tree = tmp_path_factory.mktemp("fork") / "kubernetes"
    tree.mkdir()
    for name in ("go.mod", "go.sum", "CHANGELOG/CHANGELOG-1.37.md"):
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(module / name, tree / name)
    shutil.copytree(module / "pkg", tree / "pkg", copy_function=shutil.copyfile)
    for folder, _, files in os.walk(tree):
        for name in [".", *files]:
            path = Path(folder, name)
            path.chmod(path.stat().st_mode | stat.S_IWUSR)
    return tree


def conform(tree: Path, out: Path) -> subprocess.CompletedProcess[str]:
    """`kcache conform --impl go:TREE` as a fork's CI runs it (bounded, derandomized)."""
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "kcache",
            "conform",
            "--impl",
            f"go:{tree}",
            "--acknowledge-upstream-defects",
            "--profile",
            "ci",
            "--max-examples",
            "100",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        check=False,
    )


# building a whole tree compiles the scheduler and all it imports: over 9 minutes on a busy
# two-core machine, then the seeded package again
@pytest.mark.timeout(2700)
def test_the_gate_passes_the_tree_and_finds_a_one_line_bug_in_it(
    tree: Path, tmp_path: Path
) -> None:
    """The copy conforms as v1.37; with UpdateNode's move to the head commented out the
    same run fails (exit 1) on a snapshot that misses the node's change."""
    clean = conform(tree, tmp_path / "clean")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "release v1.37's behaviours" in clean.stderr

    cache_go = tree / go_adapter.UPSTREAM_PACKAGE / "cache.go"
    source = cache_go.read_text(encoding="utf-8")
    assert source.count(CORRECT) == 1
    cache_go.write_text(source.replace(CORRECT, SEEDED), encoding="utf-8")

    seeded = conform(tree, tmp_path / "seeded")
    assert seeded.returncode == 1, seeded.stdout + seeded.stderr
    assert "update_snapshot" in seeded.stdout
    assert list((tmp_path / "seeded").glob("*.json*"))
