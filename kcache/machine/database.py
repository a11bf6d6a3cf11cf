"""The example database a run keeps its failures in: a folder, a Redis, or both, shared safely.

Hypothesis replays what its example database holds before it explores
anything new, so a database many fuzzers share turns what one found into
what all of them (and CI) try first.  `open_examples` builds one from the
URLs `--db` names: a folder (`DirectoryBasedExampleDatabase`), a
`redis://HOST:PORT/N` (`hypothesis.extra.redis.RedisExampleDatabase`, with
the `redis` client of the `kcache-conformance[redis]` extra), or several at
once (`MultiplexedDatabase`: a laptop keeps a local copy of what it shares).

Two things make sharing safe:

- keys are namespaced (`namespace`) by the target, the release (with the
  gates and TTL a run fixes) and `MACHINE_VERSION`, because a stored example
  is a sequence of choices whose meaning is the machine that drew it: replayed
  by another machine version, or for another release, it is another program;
- a Redis that goes away mid-run is never a silent loss: what it could not
  take goes to the local folder, and `Examples.outage` says what happened so
  the run stops and kcache exits 2 (an unreachable Redis at the start is an
  error at once, never a fallback).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from decimal import Decimal
from importlib import resources
from pathlib import Path

from hypothesis.database import (
    DirectoryBasedExampleDatabase,
    ExampleDatabase,
    MultiplexedDatabase,
    ReadOnlyDatabase,
)

from kcache.errors import KcacheError
from kcache.machine.profiles import DATABASE_FOLDER
from kcache.spec.releases import Release

#: the modules whose draws give a stored example its meaning
_DRAWING_MODULES = (
    "actions.py",
    "rules.py",
    "pod_rules.py",
    "pod_group_rules.py",
    "strategies.py",
)


def _machine_version() -> str:
    digest = hashlib.sha256()
    for module in _DRAWING_MODULES:
        digest.update((resources.files("kcache.machine") / module).read_bytes())
    return digest.hexdigest()[:12]


#: a digest of the machine's drawing code: any change to it starts a new namespace
MACHINE_VERSION = _machine_version()

#: seconds to wait for Redis to accept a connection, and then for each answer
_CONNECT_TIMEOUT = 5.0
_ANSWER_TIMEOUT = 10.0
#: what kcache's keys start with in a shared Redis
REDIS_KEY_PREFIX = b"kcache:"
REDIS_SCHEMES = ("redis://", "rediss://")
DB_HELP = (
    "a folder, or redis://HOST:PORT/N (pip install 'kcache-conformance[redis]'), "
    "or none (no database: nothing replayed first, nothing saved)"
)

#: `--db none`: a run that neither replays earlier failures nor keeps its own
NO_DATABASE = "none"


def named_urls(urls: Sequence[str]) -> tuple[str, ...] | None:
    """The `--db` URLs as given; None for `--db none`, which cannot be combined with another."""
    if NO_DATABASE not in urls:
        return tuple(urls)
    if len(urls) > 1:
        raise KcacheError(f"--db {NO_DATABASE} cannot be combined with another --db")
    return None


def namespace(target: str, release: Release, ttl: Decimal | None) -> bytes:
    """The key prefix of a run's examples: machine version, release, fixed gates and TTL, target.

    Everything that changes what a stored choice sequence draws is in it, so
    runs that differ in any of them never replay each other's examples.
    """
    gates = ",".join(f"{name}={value}" for name, value in release.feature_gates)
    parts = (
        MACHINE_VERSION,
        release.name + (f"+{gates}" if gates else ""),
        "ttl-drawn" if ttl is None else f"ttl-{ttl}",
        target,
    )
    return ("/".join(parts) + ":").encode()


class NamespacedDatabase(ExampleDatabase):
    """`wrapped`, every key prefixed with `prefix`."""

    def __init__(self, wrapped: ExampleDatabase, prefix: bytes) -> None:
        super().__init__()
        self._wrapped = wrapped
        self._prefix = prefix

    def __repr__(self) -> str:
        return f"NamespacedDatabase({self._wrapped!r}, {self._prefix!r})"

    def fetch(self, key: bytes) -> Iterable[bytes]:
        return self._wrapped.fetch(self._prefix + key)

    def save(self, key: bytes, value: bytes) -> None:
        self._wrapped.save(self._prefix + key, value)

    def delete(self, key: bytes, value: bytes) -> None:
        self._wrapped.delete(self._prefix + key, value)

    def move(self, src: bytes, dest: bytes, value: bytes) -> None:
        self._wrapped.move(self._prefix + src, self._prefix + dest, value)


class _RedisGuard(ExampleDatabase):
    """A Redis database that, once Redis stops answering, keeps writes in `spill` instead.

    Hypothesis would otherwise raise the connection error from deep inside
    its engine, in the middle of saving the failure just found, and the
    example would be lost.  The first error is kept in `outage`; the run
    checks it between examples and stops.
    """

    def __init__(
        self,
        url: str,
        redis_db: ExampleDatabase,
        spill: ExampleDatabase,
        outage: str | None = None,
    ) -> None:
        from redis.exceptions import RedisError  # noqa: PLC0415 -- an optional extra

        super().__init__()
        self.url = url
        self._redis = redis_db
        self._spill = spill
        self._errors = RedisError
        self.outage = outage
        #: writes the spill took because Redis could not
        self.spilled = 0

    def __repr__(self) -> str:
        return f"_RedisGuard({self.url!r})"

    def _redis_took(self, call: Callable[[], object]) -> bool:
        """Make `call` unless Redis went away before; False if it could not be made."""
        if self.outage is None:
            try:
                call()
            except self._errors as error:
                self.outage = str(error) or type(error).__name__
            else:
                return True
        return False

    def _keep(self, key: bytes, value: bytes) -> None:
        self._spill.save(key, value)
        self.spilled += 1

    def fetch(self, key: bytes) -> Iterable[bytes]:
        found: list[bytes] = []
        self._redis_took(lambda: found.extend(self._redis.fetch(key)))
        return found

    def save(self, key: bytes, value: bytes) -> None:
        if not self._redis_took(lambda: self._redis.save(key, value)):
            self._keep(key, value)

    def delete(self, key: bytes, value: bytes) -> None:
        self._redis_took(lambda: self._redis.delete(key, value))

    def move(self, src: bytes, dest: bytes, value: bytes) -> None:
        if not self._redis_took(lambda: self._redis.move(src, dest, value)):
            self._keep(dest, value)


class Examples:
    """The example database `--db` names, and whether a shared part of it went away."""

    def __init__(
        self,
        urls: Sequence[str],
        *,
        read_only: bool = False,
        local: Path = DATABASE_FOLDER,
        reached_before: bool = False,
    ) -> None:
        """`reached_before`: the run already reached every Redis (a fuzz worker, whose parent
        checked them), so one that no longer answers went away mid-run, not at the start."""
        if not urls:
            raise ValueError("no database named")
        self.urls = tuple(urls)
        folders = [_folder(url) for url in urls if not url.startswith(REDIS_SCHEMES)]
        # what a Redis cannot take goes to a folder this run writes anyway, else to `local`
        spill = folders[0] if folders else DirectoryBasedExampleDatabase(local)
        self.spill_folder = Path(spill.path)
        self._guards = [
            _guard(url, spill, reached_before=reached_before)
            for url in urls
            if url.startswith(REDIS_SCHEMES)
        ]
        parts: list[ExampleDatabase] = [*folders, *self._guards]
        combined = parts[0] if len(parts) == 1 else MultiplexedDatabase(*parts)
        self.database: ExampleDatabase = ReadOnlyDatabase(combined) if read_only else combined

    @property
    def outage(self) -> str | None:
        """`--db URL: ...` for the first Redis that stopped answering, else None."""
        for guard in self._guards:
            if guard.outage is not None:
                return f"--db {guard.url}: Redis stopped answering mid-run ({guard.outage})"
        return None

    def lost(self) -> str | None:
        """None while every Redis answers; else what went away, and where its writes went."""
        if self.outage is None:
            return None
        if not any(guard.spilled for guard in self._guards):
            return self.outage
        return f"{self.outage}; the examples it did not take are in {self.spill_folder}/"


def _folder(url: str) -> DirectoryBasedExampleDatabase:
    if "://" in url:
        raise KcacheError(f"--db {url}: unknown kind of database; use {DB_HELP}")
    path = Path(url)
    if path.exists() and not path.is_dir():
        raise KcacheError(f"--db {url}: not a folder")
    return DirectoryBasedExampleDatabase(path)


def _guard(url: str, spill: ExampleDatabase, *, reached_before: bool) -> _RedisGuard:
    """The guarded Redis on `url`; one that does not answer is refused, or, when the run
    reached it before, guarded as gone from the start (its writes go to `spill`)."""
    redis_db, silence = _redis(url)
    if silence is not None and not reached_before:
        raise KcacheError(f"--db {url}: cannot reach Redis: {silence}")
    return _RedisGuard(url, redis_db, spill, outage=silence)


def _redis(url: str) -> tuple[ExampleDatabase, str | None]:
    """A RedisExampleDatabase on `url`, and why Redis did not answer a first ping (None: it
    answered)."""
    try:
        from hypothesis.extra.redis import RedisExampleDatabase  # noqa: PLC0415
        from redis import Redis  # noqa: PLC0415 -- an optional extra
        from redis.exceptions import RedisError  # noqa: PLC0415
    except ImportError:
        raise KcacheError(
            f"--db {url}: needs the redis client: pip install 'kcache-conformance[redis]'"
        ) from None
    try:
        client = Redis.from_url(
            url, socket_connect_timeout=_CONNECT_TIMEOUT, socket_timeout=_ANSWER_TIMEOUT
        )
    except ValueError as error:
        raise KcacheError(f"--db {url}: not a Redis URL: {error}") from None
    silence = None
    try:
        client.ping()
    except RedisError as error:
        silence = str(error)
    return RedisExampleDatabase(client, key_prefix=REDIS_KEY_PREFIX), silence
