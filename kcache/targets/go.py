"""`--impl go`: upstream's own scheduler cache, behind the Go adapter in adapters/go.

`go` is the newest release (v1.37); `go:v1.35` and `go:v1.36` name the others.

The adapter is built on first use, from the release's pinned go.mod, into
`$XDG_CACHE_HOME/kcache/go-adapter/<release>-<hash>` (default `~/.cache`),
where the hash covers the adapter's sources and the Go version, so an edit or
a new toolchain builds afresh and everything else reuses the binary.

Upstream's cache package is compiled from the module cache through a
`go build -overlay` file written here: see adapters/go/README.md for why.

    python -m kcache.targets.go build v1.36    # build, print the binary's path
    python -m kcache.targets.go test v1.35     # run the adapter's Go tests
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import attrs

from kcache.bundle import GO_ADAPTER
from kcache.errors import TargetError
from kcache.spec.releases import DEFAULT_RELEASE
from kcache.targets.adapter.client import AdapterFactory

#: the adapter's Go module: adapters/go, bundled with the package (kcache.bundle); the real
#: path, since go resolves its working directory and the overlay's paths must match it
SOURCE = GO_ADAPTER
#: upstream's cache package, and where the overlay places it inside the adapter module
UPSTREAM_PACKAGE = "pkg/scheduler/backend/cache"
PLACED_PACKAGE = "internal/upstreamcache"
#: upstream's scheduler package (the cycle), and where it is placed beside the cache
UPSTREAM_SCHEDULER = "pkg/scheduler"
PLACED_SCHEDULER = "internal/upstreamscheduler"
#: every package placed into the adapter, with the folder of its accessor files under
#: `_overlay/` ("" for the cache's, None: none); the scheduler and the two small packages
#: between it and the cache import the cache, so they move with it to see the same types
RELOCATED: tuple[tuple[str, str, str | None], ...] = (
    (UPSTREAM_PACKAGE, PLACED_PACKAGE, ""),
    ("pkg/scheduler/backend/cache/debugger", "internal/upstreamcachedebugger", None),
    ("pkg/scheduler/backend/api_cache", "internal/upstreamapicache", None),
    (UPSTREAM_SCHEDULER, PLACED_SCHEDULER, "scheduler"),
)
#: the import path of the adapter module, under which the placed packages live
ADAPTER_MODULE = "kcache/goadapter"
#: seconds a build may take; a cold module cache on two cores needs several minutes
BUILD_TIMEOUT = 1800
#: suffixes of the adapter files a build reads: a change to any other file reuses the binary
BUILD_INPUTS = frozenset({".go", ".mod", ".sum"})
#: how many lines of a failed build's output the error quotes
FAILED_BUILD_LINES = 15


@attrs.frozen
class Build:
    """How to build the adapter for one release profile."""

    #: module file pinning that release's k8s.io/kubernetes (go -modfile)
    modfile: str
    #: build tags selecting the release's Go file (release_*.go)
    tags: str


BUILDS: dict[str, Build] = {
    "v1.35": Build(modfile="go.mod", tags=""),
    "v1.36": Build(modfile="v1.36.mod", tags="kcache_v136"),
    "v1.37": Build(modfile="v1.37.mod", tags="kcache_v137"),
}


def factory(version: str = DEFAULT_RELEASE.name) -> AdapterFactory:
    """The adapter factory for `version`, building the adapter first if needed."""
    return AdapterFactory([str(build(version))])


def build(version: str = DEFAULT_RELEASE.name) -> Path:
    """The adapter binary for `version`, built unless an identical build exists."""
    go, settings = _toolchain(version)
    directory = _build_directory(go, version)
    binary = directory / "goadapter"
    if binary.is_file():
        return binary
    print(f"kcache: building the Go adapter for {version} into {directory}", file=sys.stderr)
    overlay = _write_overlay(go, version, settings, directory)
    with tempfile.TemporaryDirectory(dir=directory) as scratch:
        built = Path(scratch) / "goadapter"
        _go(go, version, "build", *_flags(settings, overlay), "-o", str(built), ".")
        built.replace(binary)  # atomic: a concurrent build finds a whole binary or none
    return binary


def test(version: str = DEFAULT_RELEASE.name) -> str:
    """Run the adapter's own Go tests for `version`; their output (a failure raises)."""
    go, settings = _toolchain(version)
    overlay = _write_overlay(go, version, settings, _build_directory(go, version))
    return _go(go, version, "test", *_flags(settings, overlay), ".")


def _toolchain(version: str) -> tuple[str, Build]:
    """The `go` command and the settings for `version`; a TargetError says what is missing."""
    if version not in BUILDS:
        raise TargetError(f"--impl go:{version}: no Go adapter build (known: {', '.join(BUILDS)})")
    go = shutil.which("go")
    if go is None:
        raise TargetError(
            f"--impl go:{version}: the Go toolchain is not on PATH (`go`); "
            "install Go 1.26 or newer, or choose another --impl"
        )
    if not (SOURCE / "go.mod").is_file():
        raise TargetError(
            f"--impl go:{version}: no adapter sources at {SOURCE}; "
            "the package is incomplete: reinstall kcache-conformance"
        )
    return go, BUILDS[version]


def _build_directory(go: str, version: str) -> Path:
    home = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    directory = home / "kcache" / "go-adapter" / f"{version}-{_fingerprint(go, version)}"
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def _flags(settings: Build, overlay: Path) -> list[str]:
    """Flags shared by build and test, so that one compiles what the other already has."""
    return [f"-modfile={settings.modfile}", f"-tags={settings.tags}", f"-overlay={overlay}"]


def _write_overlay(go: str, version: str, settings: Build, directory: Path) -> Path:
    """Write the overlay file into `directory` (atomically) and return its path.

    It places each package of RELOCATED, its non-test sources read in place
    from the module cache, and our accessor files into the adapter module.
    A source importing another placed package cannot be read in place: a copy
    whose import paths alone are rewritten to the placed ones is written
    under `directory` and mapped instead.
    """
    modfile = f"-modfile={settings.modfile}"
    download = json.loads(
        _go(go, version, "mod", "download", modfile, "-json", "k8s.io/kubernetes")
    )
    module = Path(download["Dir"])
    imports = {
        f'"k8s.io/kubernetes/{package}"': f'"{ADAPTER_MODULE}/{placed}"'
        for package, placed, _ in RELOCATED
    }
    replace: dict[str, str] = {}
    for package, placed_package, accessors in RELOCATED:
        placed = SOURCE / placed_package
        for source in sorted((module / package).glob("*.go")):
            if source.name.endswith("_test.go"):
                continue
            replace[str(placed / source.name)] = str(
                _relocated(source, imports, directory / "relocated" / placed_package)
            )
        if accessors is None:
            continue
        # shared and release files are placed under distinct prefixes, so that a
        # release file never silently replaces a shared one of the same name
        folder = SOURCE / "_overlay" / accessors
        for prefix, files in (
            ("zz_kcache_", folder),
            ("zz_kcache_release_", folder / version),
        ):
            for accessor in sorted(files.glob("*.go")):
                replace[str(placed / f"{prefix}{accessor.name}")] = str(accessor)
    overlay = directory / "overlay.json"
    partial = directory / f"overlay.json.{os.getpid()}"
    partial.write_text(json.dumps({"Replace": replace}, indent=1) + "\n", encoding="utf-8")
    partial.replace(overlay)
    return overlay


def _relocated(source: Path, imports: dict[str, str], folder: Path) -> Path:
    """`source` itself, or a copy under `folder` importing the placed packages instead."""
    text = source.read_text(encoding="utf-8")
    rewritten = text
    for upstream, placed in imports.items():
        rewritten = rewritten.replace(upstream, placed)
    if rewritten == text:
        return source
    folder.mkdir(parents=True, exist_ok=True)
    copy = folder / source.name
    partial = folder / f"{source.name}.{os.getpid()}"
    partial.write_text(rewritten, encoding="utf-8")
    partial.replace(copy)
    return copy


def _fingerprint(go: str, version: str) -> str:
    """A short hash of what the binary is built from: sources, module files, the Go version."""
    digest = hashlib.sha256()
    inputs = (p for p in SOURCE.rglob("*") if p.suffix in BUILD_INPUTS)
    for path in sorted(p for p in inputs if not p.name.endswith("_test.go")):
        digest.update(str(path.relative_to(SOURCE)).encode() + b"\0" + path.read_bytes() + b"\0")
    digest.update(_go(go, version, "env", "GOVERSION").encode())
    return digest.hexdigest()[:16]


def _go(go: str, version: str, *args: str) -> str:
    """Run `go ARGS...` in the adapter module; a failure names the command and quotes its end."""
    command = " ".join(["go", *args])
    try:
        done = subprocess.run(
            [go, *args],
            cwd=SOURCE,
            capture_output=True,
            text=True,
            timeout=BUILD_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise TargetError(
            f"--impl go:{version}: `{command}` took longer than {BUILD_TIMEOUT} s"
        ) from None
    if done.returncode != 0:
        output = (done.stderr + done.stdout).strip().splitlines()
        raise TargetError(
            f"--impl go:{version}: `{command}` failed (exit {done.returncode}) in {SOURCE}\n"
            + "\n".join(f"  {line}" for line in output[-FAILED_BUILD_LINES:])
        )
    return done.stdout


def main(argv: list[str]) -> int:
    """`python -m kcache.targets.go [build|test] [VERSION]`: build (print the path) or test."""
    command = argv[0] if argv else "build"
    version = argv[1] if len(argv) > 1 else DEFAULT_RELEASE.name
    actions = {"build": lambda: str(build(version)), "test": lambda: test(version).rstrip()}
    if command not in actions:
        print(
            f"usage: python -m kcache.targets.go [build|test] [{'|'.join(BUILDS)}]", file=sys.stderr
        )
        return 2
    try:
        print(actions[command]())
    except TargetError as error:
        print(f"kcache: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
