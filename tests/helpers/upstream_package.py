"""Run Go test files inside upstream's own cache package, at a pinned release.

Go refuses an overlay that adds files beneath GOMODCACHE, so the files
cannot be dropped into k8s.io/kubernetes/pkg/scheduler/backend/cache where
the module cache holds it.  As the adapter build does (adapters/go/README.md),
the package is placed instead: a scratch module, pinned by the release's
module file of adapters/go, gets a `placed/` folder into which an overlay
maps every `.go` file of upstream's package, its own `_test.go` files
included, read in place from the module cache, and the tests beside them.
So a test compiles against upstream's unexported names and beside
upstream's own tests, exactly as it would in upstream's tree.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

from kcache.spec.releases import RELEASES
from kcache.targets.go import SOURCE, UPSTREAM_PACKAGE, pinned_modfile, toolchain_environment

#: seconds a `go test` may take: compiling the package's tests from a cold build cache
#: on two busy cores takes minutes
GO_TEST_TIMEOUT = 1500


def go_test(
    tests: Mapping[str, str], release: str, scratch: Path, run: str
) -> subprocess.CompletedProcess[str]:
    """`go test -v -run RUN` over upstream's package at `release` with `tests` (name -> text)."""
    modfile = SOURCE / pinned_modfile(RELEASES[release])
    environment = {**os.environ, **toolchain_environment(RELEASES[release])}
    shutil.copyfile(modfile, scratch / "go.mod")
    shutil.copyfile(modfile.with_suffix(".sum"), scratch / "go.sum")
    download = subprocess.run(
        ["go", "mod", "download", "-json", "k8s.io/kubernetes"],
        cwd=scratch,
        env=environment,
        capture_output=True,
        text=True,
        check=True,
        timeout=GO_TEST_TIMEOUT,
    )
    package = Path(json.loads(download.stdout)["Dir"]) / UPSTREAM_PACKAGE
    placed = scratch / "placed"
    placed.mkdir()
    replace = {str(placed / source.name): str(source) for source in package.glob("*.go")}
    for name, text in tests.items():
        written = scratch / name
        written.write_text(text, encoding="utf-8")
        replace[str(placed / name)] = str(written)
    overlay = scratch / "overlay.json"
    overlay.write_text(json.dumps({"Replace": replace}), encoding="utf-8")
    return subprocess.run(
        ["go", "test", f"-overlay={overlay}", "-count=1", "-v", "-run", run, "./placed"],
        cwd=scratch,
        env=environment,
        capture_output=True,
        text=True,
        check=False,
        timeout=GO_TEST_TIMEOUT,
    )
