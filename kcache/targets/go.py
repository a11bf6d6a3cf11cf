"""`--impl go`: upstream's own scheduler cache, behind the Go adapter in adapters/go.

`go` builds against the default release's pinned upstream (v1.37.2).  The
part after `go:` names what to build against:

- a modelled release (`go:v1.36`): the version it was checked against, from
  the adapter's committed module file (`Release.upstream`, adapters/go/*.mod);
- any k8s.io/kubernetes version the Go module proxy serves (`go:v1.36.3`),
  taken as the modelled release of its line (`spec.releases.describing`),
  with module pins generated as adapters/go/pin.sh writes them;
- a local kubernetes tree (`go:PATH`, a contributor's checkout), replacing
  k8s.io/kubernetes (and each staging module the tree has) by the tree, with
  its release read from the tree's newest CHANGELOG/CHANGELOG-1.N.md, or
  named as `go:PATH@v1.37`.

In every case the adapter's Go files are chosen by the build tags of the
release's behaviours (`Release.go_tags`), and the release's name is linked in.
The adapter is built on first use into
`$XDG_CACHE_HOME/kcache/go-adapter/<label>-<hash>` (default `~/.cache`),
where the hash covers the adapter's sources, the tags, the upstream version
or tree, and the Go version, so an edit or a new toolchain builds afresh and
everything else reuses the binary.  A tree is built once in each kcache
command that uses it: `go build` recompiles only what changed in it since.

Upstream's cache package is compiled from the module cache (or the tree)
through a `go build -overlay` file written here: see adapters/go/README.md.

    python -m kcache.targets.go build v1.36      # build, print the binary's path
    python -m kcache.targets.go test v1.35       # run the adapter's Go tests
    python -m kcache.targets.go build ~/src/kubernetes
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import attrs

from kcache.bundle import GO_ADAPTER
from kcache.errors import TargetError
from kcache.spec.releases import (
    DEFAULT_RELEASE,
    RELEASES,
    Release,
    checked_against,
    describing,
)
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
    """What one `go:SPEC` builds: a release's behaviours over one upstream source."""

    #: the release whose behaviours the adapter's files are chosen by (its build tags)
    release: Release
    #: the k8s.io/kubernetes version built against; None for a tree
    version: str | None
    #: a local kubernetes tree built against instead of a published version
    tree: Path | None = None
    #: whether a committed module file pins the version (the release's own upstream)
    pinned: bool = False

    @property
    def label(self) -> str:
        """How messages name this build: the release, the version or the tree."""
        if self.tree is not None:
            return str(self.tree)
        return self.release.name if self.pinned else str(self.version)

    def flags(self, modfile: str, overlay: Path) -> list[str]:
        """Flags shared by build and test, so that one compiles what the other already has."""
        return [
            f"-modfile={modfile}",
            f"-tags={','.join(self.release.go_tags())}",
            f"-ldflags=-X main.release={self.release.name}",
            f"-overlay={overlay}",
        ]


#: binaries of trees built by this process: a tree is built once per kcache command
_BUILT_TREES: set[Path] = set()
#: a k8s.io/kubernetes version as `go:` takes it (v1.36.3, v1.37.0-rc.1)
_VERSION = re.compile(r"v\d+\.\d+\.\d+(-[0-9A-Za-z.]+)?")
#: a CHANGELOG file of a kubernetes tree, and the minor version it names
_CHANGELOG = re.compile(r"CHANGELOG-1\.(\d+)\.md")
#: a module file's toolchain line: the Go release its pin needs (`GOTOOLCHAIN`)
_TOOLCHAIN_LINE = re.compile(r"^toolchain\s+(go\S+)", re.MULTILINE)
#: a go.mod's module directive
_MODULE = re.compile(r"^module\s+\"?([^\s\"]+)", re.MULTILINE)
#: a module file's requirement of k8s.io/kubernetes
_REQUIRED = re.compile(r"^\s*(?:require\s+)?k8s\.io/kubernetes\s+(v\S+)", re.MULTILINE)
#: a staging module of k8s.io/kubernetes, as its own go.mod replaces it
_STAGING = re.compile(r"^\s*(k8s\.io/[a-z0-9-]+) => \./staging/\S+", re.MULTILINE)


def resolve(spec: str = "") -> Build:
    """The build `go:SPEC` names (empty: the default release); TargetError says what is wrong."""
    spec = spec or DEFAULT_RELEASE.name
    pinned = RELEASES.get(spec) or checked_against(spec)
    if pinned is not None:
        return Build(pinned, pinned.upstream, pinned=True)
    if _VERSION.fullmatch(spec):
        release = describing(spec)
        if release is None:
            raise TargetError(
                f"--impl go:{spec}: no modelled release describes k8s.io/kubernetes {spec} "
                f"(modelled: {', '.join(RELEASES)}; spec/releases.py)"
            )
        return Build(release, spec)
    if os.sep in spec or spec.startswith((".", "~")) or Path(spec).is_dir():
        return _tree(spec)
    raise TargetError(
        f"--impl go:{spec}: expected a release ({', '.join(RELEASES)}), a k8s.io/kubernetes "
        "version (v1.36.3) or the path of a kubernetes tree"
    )


def _tree(spec: str) -> Build:
    """The build of the kubernetes tree at `spec` (`PATH` or `PATH@RELEASE`)."""
    path, named = Path(spec).expanduser(), ""
    if not path.is_dir() and "@" in spec:
        head, _, named = spec.rpartition("@")
        path = Path(head).expanduser()
    if not path.is_dir():
        raise TargetError(f"--impl go:{spec}: {path} is not a directory")
    path = path.resolve()
    gomod = path / "go.mod"
    module = _MODULE.search(gomod.read_text(encoding="utf-8")) if gomod.is_file() else None
    if module is None or module.group(1) != "k8s.io/kubernetes":
        raise TargetError(
            f"--impl go:{spec}: {gomod} does not declare `module k8s.io/kubernetes`; "
            "name the root of a kubernetes tree"
        )
    if named:
        if named not in RELEASES:
            raise TargetError(
                f"--impl go:{spec}: unknown release {named} (modelled: {', '.join(RELEASES)})"
            )
        return Build(RELEASES[named], None, path)
    minors = [
        int(found.group(1))
        for changelog in (path / "CHANGELOG").glob("CHANGELOG-1.*.md")
        if (found := _CHANGELOG.fullmatch(changelog.name))
    ]
    if not minors:
        raise TargetError(
            f"--impl go:{spec}: cannot tell the tree's release (no CHANGELOG/CHANGELOG-1.N.md); "
            f"name it: --impl go:{spec}@{DEFAULT_RELEASE.name}"
        )
    line = f"v1.{max(minors)}"
    release = describing(line)
    if release is None:
        raise TargetError(
            f"--impl go:{spec}: the tree is {line} (CHANGELOG/CHANGELOG-1.{max(minors)}.md), "
            f"which no modelled release describes (modelled: {', '.join(RELEASES)}); "
            f"to hold it to one anyway: --impl go:{spec}@{DEFAULT_RELEASE.name}"
        )
    return Build(release, None, path)


def factory(spec: str = "") -> AdapterFactory:
    """The adapter factory for `go:SPEC`, building the adapter first if needed."""
    return AdapterFactory([str(build(spec))])


def build(spec: str = "") -> Path:
    """The adapter binary for `go:SPEC`, built unless an identical build exists."""
    target = resolve(spec)
    go = _toolchain(target)
    directory = _build_directory(go, target)
    binary = directory / "goadapter"
    if binary.is_file() and (target.tree is None or binary in _BUILT_TREES):
        return binary
    print(
        f"kcache: building the Go adapter for {target.label} "
        f"(release {target.release.name}'s behaviours) into {directory}",
        file=sys.stderr,
    )
    modfile = _modfile(go, target, directory)
    overlay = _write_overlay(go, target, modfile, directory)
    with tempfile.TemporaryDirectory(dir=directory) as scratch:
        built = Path(scratch) / "goadapter"
        _go(go, target, "build", *target.flags(modfile, overlay), "-o", str(built), ".")
        built.replace(binary)  # atomic: a concurrent build finds a whole binary or none
    _BUILT_TREES.add(binary)
    return binary


def test(spec: str = "") -> str:
    """Run the adapter's own Go tests for `go:SPEC`; their output (a failure raises)."""
    target = resolve(spec)
    go = _toolchain(target)
    directory = _build_directory(go, target)
    modfile = _modfile(go, target, directory)
    overlay = _write_overlay(go, target, modfile, directory)
    return _go(go, target, "test", *target.flags(modfile, overlay), ".")


def _toolchain(target: Build) -> str:
    """The `go` command; a TargetError says what is missing."""
    go = shutil.which("go")
    if go is None:
        raise TargetError(
            f"--impl go:{target.label}: the Go toolchain is not on PATH (`go`); "
            "install Go 1.26 or newer, or choose another --impl"
        )
    if not (SOURCE / "go.mod").is_file():
        raise TargetError(
            f"--impl go:{target.label}: no adapter sources at {SOURCE}; "
            "the package is incomplete: reinstall kcache-conformance"
        )
    return go


def _build_directory(go: str, target: Build) -> Path:
    home = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    label = "tree" if target.tree is not None else target.label
    directory = home / "kcache" / "go-adapter" / f"{label}-{_fingerprint(go, target)}"
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def pinned_modfile(release: Release) -> str:
    """The committed module file (adapters/go/*.mod) requiring `release.upstream`."""
    for modfile in sorted(SOURCE.glob("*.mod")):
        if release.upstream in _REQUIRED.findall(modfile.read_text(encoding="utf-8")):
            return modfile.name
    raise TargetError(
        f"--impl go:{release.name}: no module file in {SOURCE} requires k8s.io/kubernetes "
        f"{release.upstream}; pin it: adapters/go/pin.sh {release.upstream} {release.name}.mod"
    )


def _modfile(go: str, target: Build, directory: Path) -> str:
    """The module file to build with: the committed pin, or one generated into `directory`.

    A generated file starts from the release's pin and is edited as pin.sh
    does: k8s.io/kubernetes at the version asked for, or replaced by the tree,
    and each staging module its go.mod lists at the matching v0.x.y, or
    replaced by the tree's own copy; `go mod tidy` completes it.
    """
    pinned = pinned_modfile(target.release)
    if target.pinned:
        return pinned
    modfile = directory / "adapter.mod"
    if modfile.is_file():  # the directory's name covers the version, or the tree's go.mod
        return str(modfile)
    scratch = directory / f"pinning-{os.getpid()}.mod"
    try:
        _pin(go, target, pinned, scratch)
    finally:
        scratch.unlink(missing_ok=True)
        scratch.with_suffix(".sum").unlink(missing_ok=True)
    return str(modfile)


def _pin(go: str, target: Build, pinned: str, scratch: Path) -> None:
    """Write the build's module file at `scratch` (and its .sum), then move both beside it
    as adapter.mod and adapter.sum."""
    modfile = scratch.with_name("adapter.mod")
    shutil.copyfile(SOURCE / pinned, scratch)
    shutil.copyfile(SOURCE / pinned.replace(".mod", ".sum"), scratch.with_suffix(".sum"))
    edit = ["mod", "edit", f"-modfile={scratch}"]
    if target.tree is not None:
        upstream_gomod = target.tree / "go.mod"
        _go(go, target, *edit, f"-replace=k8s.io/kubernetes={target.tree}")
    else:
        upstream_gomod = Path(_download(go, target, f"-modfile={scratch}")["GoMod"])
        _go(go, target, *edit, f"-require=k8s.io/kubernetes@{target.version}")
    for module in _STAGING.findall(upstream_gomod.read_text(encoding="utf-8")):
        if target.tree is None:
            staging = str(target.version).replace("v1.", "v0.", 1)
            _go(go, target, *edit, f"-replace={module}={module}@{staging}")
        elif (target.tree / "staging" / "src" / module / "go.mod").is_file():
            _go(go, target, *edit, f"-replace={module}={target.tree / 'staging' / 'src' / module}")
    print(f"kcache: pinning the modules of {target.label} (go mod tidy)", file=sys.stderr)
    _go(go, target, "mod", "tidy", "-e", f"-modfile={scratch}")
    scratch.with_suffix(".sum").replace(modfile.with_suffix(".sum"))
    scratch.replace(modfile)


def _download(go: str, target: Build, modfile: str) -> dict[str, str]:
    """`go mod download -json` of the build's k8s.io/kubernetes; its error is a TargetError."""
    module = "k8s.io/kubernetes" + (f"@{target.version}" if target.version else "")
    answer = json.loads(
        _go(go, target, "mod", "download", modfile, "-json", module, answers_json=True)
    )
    if "Error" in answer:
        raise TargetError(
            f"--impl go:{target.label}: the Go module proxy does not serve {module}: "
            f"{answer['Error']}"
        )
    return dict(answer)


def _write_overlay(go: str, target: Build, modfile: str, directory: Path) -> Path:
    """Write the overlay file into `directory` (atomically) and return its path.

    It places each package of RELOCATED, its non-test sources read in place
    from the module cache (or the tree), and our accessor files into the
    adapter module; their build tags pick the ones of the release's
    behaviours.  A source importing another placed package cannot be read in
    place: a copy whose import paths alone are rewritten to the placed ones
    is written under `directory` and mapped instead.
    """
    module = target.tree or Path(_download(go, target, f"-modfile={modfile}")["Dir"])
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
        for accessor in sorted((SOURCE / "_overlay" / accessors).glob("*.go")):
            replace[str(placed / f"zz_kcache_{accessor.name}")] = str(accessor)
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


def _fingerprint(go: str, target: Build) -> str:
    """A short hash of what the binary is built from: sources, module files, build tags,
    the upstream version or tree (its path and go.mod), the Go version."""
    digest = hashlib.sha256()
    inputs = (p for p in SOURCE.rglob("*") if p.suffix in BUILD_INPUTS)
    for path in sorted(p for p in inputs if not p.name.endswith("_test.go")):
        digest.update(str(path.relative_to(SOURCE)).encode() + b"\0" + path.read_bytes() + b"\0")
    digest.update(" ".join(target.flags("", Path())).encode() + b"\0")
    if target.tree is not None:
        digest.update(str(target.tree).encode() + b"\0" + (target.tree / "go.mod").read_bytes())
    else:
        digest.update(str(target.version).encode() + b"\0")
    digest.update(_go(go, target, "env", "GOVERSION").encode())
    return digest.hexdigest()[:16]


def toolchain_environment(release: Release) -> dict[str, str]:
    """`GOTOOLCHAIN` for a release whose pin names a newer Go than the machine's (its
    module file's `toolchain` line, which pin.sh writes): the go command fetches that
    toolchain from the module proxy once and keeps it in the module cache."""
    pinned = SOURCE / pinned_modfile(release)
    line = _TOOLCHAIN_LINE.search(pinned.read_text(encoding="utf-8"))
    return {"GOTOOLCHAIN": line.group(1)} if line else {}


def _go(go: str, target: Build, *args: str, answers_json: bool = False) -> str:
    """Run `go ARGS...` in the adapter module; a failure names the command and quotes its end.

    With `answers_json` a failure that printed its JSON answer (`go mod download
    -json`) returns it instead: its `Error` says what went wrong.
    """
    command = " ".join(["go", *args])
    try:
        done = subprocess.run(
            [go, *args],
            cwd=SOURCE,
            env={**os.environ, **toolchain_environment(target.release)},
            capture_output=True,
            text=True,
            timeout=BUILD_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise TargetError(
            f"--impl go:{target.label}: `{command}` took longer than {BUILD_TIMEOUT} s"
        ) from None
    if done.returncode != 0 and answers_json and done.stdout.lstrip().startswith("{"):
        return done.stdout
    if done.returncode != 0:
        output = (done.stderr + done.stdout).strip().splitlines()
        raise TargetError(
            f"--impl go:{target.label}: `{command}` failed (exit {done.returncode}) in {SOURCE}\n"
            + "\n".join(f"  {line}" for line in output[-FAILED_BUILD_LINES:])
        )
    return done.stdout


def main(argv: list[str]) -> int:
    """`python -m kcache.targets.go [build|test] [SPEC]`: build (print the path) or test."""
    command = argv[0] if argv else "build"
    spec = argv[1] if len(argv) > 1 else ""
    actions = {"build": lambda: str(build(spec)), "test": lambda: test(spec).rstrip()}
    if command not in actions:
        print(
            f"usage: python -m kcache.targets.go [build|test] [{'|'.join(RELEASES)}|VERSION|PATH]",
            file=sys.stderr,
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
