"""What `--impl TARGET` names: a `spec.protocol.CacheFactory` that builds the caches to check.

| target | caches built by |
| --- | --- |
| `spec` | the reference model, `spec.cache.Cache` |
| `impl` | the optimized cache, `impl.cache.Cache` |
| `MODULE:FACTORY` | any callable `FACTORY(ttl=Decimal, release=Release)` in an importable module |
| `cmd:COMMAND ARGS...` | an adapter process speaking docs/adapter-protocol.md |
| `go`, `go:SOURCE` | upstream's own cache behind the Go adapter (kcache.targets.go) |

Modules are imported only when a target is resolved, so kcache starts without
impl or Go.  `opened` puts an in-process target's calls under a time limit
(`kcache.targets.time_limit`); an adapter has its own per request.  A
factory may list the releases it models in a `releases` attribute (release
names); without one it is taken to model every release.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import shlex
import sys
from collections.abc import Iterator
from contextlib import AbstractContextManager
from decimal import Decimal
from typing import Any

from kcache.errors import KcacheError, TargetError
from kcache.spec.protocol import CacheFactory, SchedulerCache
from kcache.spec.releases import DEFAULT_RELEASE, RELEASES, Release
from kcache.targets.adapter.client import AdapterFactory
from kcache.targets.time_limit import STEP_TIMEOUT, time_limited

#: short names for the factories in this repository
BUILTIN: dict[str, str] = {"spec": "kcache.spec.cache:Cache", "impl": "kcache.impl.cache:Cache"}

TARGET_HELP = "spec | impl | MODULE:FACTORY | cmd:COMMAND ARGS... | go[:RELEASE|VERSION|PATH]"


def resolve(target: str) -> CacheFactory:
    """The factory `target` names; a target that names nothing usable raises TargetError."""
    if target.startswith("cmd:"):
        return _command(target)
    if target == "go" or target.startswith("go:"):
        return _go(target)
    if target in BUILTIN:
        return _imported(BUILTIN[target], target)
    if ":" in target:
        return _imported(target, target)
    raise TargetError(f"--impl {target}: unknown target (expected {TARGET_HELP})")


@contextlib.contextmanager
def opened(target: str, step_timeout: float = STEP_TIMEOUT) -> Iterator[CacheFactory]:
    """`resolve(target)`, and afterwards close a factory that is a context manager.

    An adapter factory is one: closing it stops the adapter process.  Every
    call answers within `step_timeout` seconds or fails its step: an adapter
    by its own request deadline, any other factory's caches by
    `kcache.targets.time_limit`.
    """
    factory = resolve(target)
    if isinstance(factory, AdapterFactory):
        factory.step_timeout = step_timeout
    if isinstance(factory, AbstractContextManager):
        with factory:
            yield factory
    else:
        with time_limited(factory, step_timeout) as limited:
            yield limited


def modelled_releases(factory: CacheFactory) -> tuple[str, ...]:
    """The names of the releases `factory` models: its `releases` attribute, else all."""
    return tuple(getattr(factory, "releases", RELEASES))


def _imported(reference: str, target: str) -> CacheFactory:
    module_name, _, attribute = reference.partition(":")
    if not module_name or not attribute:
        raise TargetError(f"--impl {target}: expected MODULE:FACTORY")
    try:
        found: Any = _import(module_name)
    except Exception as error:
        raise TargetError(
            f"--impl {target}: cannot import {module_name}: {type(error).__name__}: {error}"
        ) from None
    for name in attribute.split("."):
        if not hasattr(found, name):
            raise TargetError(f"--impl {target}: {module_name} has no {attribute}")
        found = getattr(found, name)
    if not callable(found):
        raise TargetError(f"--impl {target}: {attribute} is not callable")
    return found  # type: ignore[no-any-return]


def _import(module_name: str) -> Any:
    """Import `module_name`, from the current folder too, as `python -m` would.

    The `kcache` console script puts its own folder on sys.path, not the
    current one, so a module beside the user (`kcache conform --impl
    mycache:Cache`) would need PYTHONPATH=. without this.  The folder stays
    on sys.path: the module may import its siblings when its factory runs.
    """
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        here = os.getcwd()
        if error.name != module_name.partition(".")[0] or here in sys.path or "" in sys.path:
            raise
        sys.path.insert(0, here)
        return importlib.import_module(module_name)


def _command(target: str) -> CacheFactory:
    try:
        argv = shlex.split(target.removeprefix("cmd:"))
    except ValueError as error:
        raise TargetError(f"--impl {target}: {error}") from None
    if not argv:
        raise TargetError("--impl cmd: needs a command, e.g. cmd:./my-adapter --flag")
    return AdapterFactory(argv)


def _go(target: str) -> CacheFactory:
    """The Go adapter of upstream's cache; `kcache.targets.go` builds it on first use.

    After `go:` comes a release, a k8s.io/kubernetes version or a tree's path
    (`go_adapter.resolve` refuses anything else); the handshake says which
    release the adapter models, and the client checks it.
    """
    version = target.partition(":")[2] or DEFAULT_RELEASE.name
    try:
        go_adapter = importlib.import_module("kcache.targets.go")
        factory: CacheFactory = go_adapter.factory(version)
    except KcacheError:
        raise
    except Exception as error:
        raise TargetError(f"--impl {target}: {type(error).__name__}: {error}") from None
    return factory


def require_release(factory: CacheFactory, target: str, release: str) -> None:
    """TargetError unless the target models `release` (say so before running anything)."""
    modelled = modelled_releases(factory)
    if release not in modelled:
        raise TargetError(
            f"--impl {target} does not model release {release} (it models {', '.join(modelled)})"
        )


def build_cache(
    factory: CacheFactory, *, ttl: Decimal, release: Release, who: str = "the target"
) -> SchedulerCache:
    """One cache from `factory`; a factory that raises is the target's fault (TargetError).

    `who` starts the message: `--impl NAME`, or the trace being replayed.

    Otherwise the first step of a run would fail and be reported as a
    disagreement with the spec.
    """
    try:
        return factory(ttl=ttl, release=release)
    except KcacheError:
        raise
    except Exception as error:
        raise TargetError(
            f"{who}: building a cache failed (ttl={ttl}, release={release.name}): "
            f"{type(error).__name__}: {error}"
        ) from error
