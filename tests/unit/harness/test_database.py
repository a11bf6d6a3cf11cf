"""Tests for kcache/machine/database.py: example databases from URLs, namespaced, real Redis."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest
from helpers.redis_server import RedisServer, redis_server
from hypothesis.database import InMemoryExampleDatabase

from kcache.errors import KcacheError
from kcache.machine.database import (
    MACHINE_VERSION,
    REDIS_KEY_PREFIX,
    Examples,
    NamespacedDatabase,
    namespace,
)
from kcache.spec.releases import V1_36, V1_37


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RedisServer]:
    with redis_server(tmp_path / "redis") as running:
        yield running


class TestNamespace:
    def test_names_everything_that_gives_an_example_its_meaning(self) -> None:
        """Machine version, release, fixed gates and TTL, then the target."""
        assert namespace("impl", V1_37, None) == f"{MACHINE_VERSION}/v1.37/ttl-drawn/impl:".encode()
        gated = V1_37.with_gates({"InterPodAffinityHostnameFastPath": True})
        assert namespace("go", gated, Decimal("2.5")) == (
            f"{MACHINE_VERSION}/v1.37+InterPodAffinityHostnameFastPath=True/ttl-2.5/go:".encode()
        )

    def test_runs_that_differ_never_share_a_namespace(self) -> None:
        """Another target, release, gate or fixed TTL is another namespace."""
        gated = V1_37.with_gates({"InterPodAffinityHostnameFastPath": True})
        prefixes = {
            namespace("impl", V1_37, None),
            namespace("spec", V1_37, None),
            namespace("impl", V1_36, None),
            namespace("impl", gated, None),
            namespace("impl", V1_37, Decimal(0)),
        }
        assert len(prefixes) == 5


def test_a_namespaced_database_keeps_its_keys_apart() -> None:
    """Two namespaces over one store see only their own examples, and moves stay inside."""
    store = InMemoryExampleDatabase()
    first, second = NamespacedDatabase(store, b"a:"), NamespacedDatabase(store, b"b:")
    first.save(b"key", b"found")
    assert list(first.fetch(b"key")) == [b"found"]
    assert list(second.fetch(b"key")) == []
    first.move(b"key", b"key.secondary", b"found")
    assert list(store.fetch(b"a:key.secondary")) == [b"found"]
    first.delete(b"key.secondary", b"found")
    assert list(store.fetch(b"a:key.secondary")) == []


class TestUrls:
    def test_a_folder(self, tmp_path: Path) -> None:
        """A path is a folder database, created on the first save."""
        examples = Examples([str(tmp_path / "db")])
        examples.database.save(b"key", b"value")
        assert list(Examples([str(tmp_path / "db")]).database.fetch(b"key")) == [b"value"]

    def test_redis_and_a_folder_both_keep_what_is_saved(
        self, server: RedisServer, tmp_path: Path
    ) -> None:
        """Several URLs are one database: a save reaches the Redis and the local copy."""
        examples = Examples([server.url, str(tmp_path / "copy")])
        examples.database.save(b"key", b"value")
        assert server.client.smembers(REDIS_KEY_PREFIX + b"key") == {b"value"}
        assert list(Examples([str(tmp_path / "copy")]).database.fetch(b"key")) == [b"value"]

    def test_read_only_replays_and_writes_nothing(self, server: RedisServer) -> None:
        """--replay-only: the stored example is fetched; saves and deletes change nothing."""
        Examples([server.url]).database.save(b"key", b"found")
        reader = Examples([server.url], read_only=True).database
        assert list(reader.fetch(b"key")) == [b"found"]
        reader.delete(b"key", b"found")
        reader.save(b"key", b"other")
        assert server.client.smembers(REDIS_KEY_PREFIX + b"key") == {b"found"}

    def test_an_unreachable_redis_is_refused_at_once(self, server: RedisServer) -> None:
        """No silent fallback: the URL and the reason in one error."""
        server.stop()
        with pytest.raises(KcacheError, match=rf"^--db {server.url}: cannot reach Redis: "):
            Examples([server.url])

    def test_a_redis_gone_before_a_worker_started_is_an_outage(
        self, server: RedisServer, tmp_path: Path
    ) -> None:
        """A fuzz worker starting after Redis went away (its parent reached it) meets an
        outage mid-run, not a bad --db: what it saves is kept in the local folder."""
        server.stop()
        examples = Examples([server.url], local=tmp_path / "local", reached_before=True)
        assert examples.lost() is not None
        assert examples.lost().startswith(f"--db {server.url}: Redis stopped answering mid-run (")
        examples.database.save(b"key", b"found")
        assert list(Examples([str(tmp_path / "local")]).database.fetch(b"key")) == [b"found"]
        assert examples.lost().endswith(f"; the examples it did not take are in {tmp_path}/local/")

    @pytest.mark.parametrize(
        ("url", "message"),
        [
            ("http://host/db", "unknown kind of database"),
            ("redis://:bad:port", "not a Redis URL: Port"),
        ],
    )
    def test_bad_urls(self, url: str, message: str) -> None:
        """A URL kcache cannot use names itself and what is wrong."""
        with pytest.raises(KcacheError, match=f"^--db {url}: {message}"):
            Examples([url])

    def test_a_file_is_not_a_folder(self, tmp_path: Path) -> None:
        """A path to a file is refused."""
        (tmp_path / "file").write_text("")
        with pytest.raises(KcacheError, match="not a folder"):
            Examples([str(tmp_path / "file")])


class TestRedisGoingAway:
    def test_writes_go_to_the_local_folder_and_the_outage_is_told(
        self, server: RedisServer, tmp_path: Path
    ) -> None:
        """Once Redis stops, saves land in the local folder and `lost()` says where."""
        examples = Examples([server.url], local=tmp_path / "local")
        assert examples.lost() is None
        server.stop()
        examples.database.save(b"key", b"found")
        examples.database.move(b"key", b"key.secondary", b"shrunk")
        assert list(examples.database.fetch(b"key")) == []
        lost = examples.lost()
        assert lost is not None
        assert lost.startswith(f"--db {server.url}: Redis stopped answering mid-run (")
        assert lost.endswith(f"the examples it did not take are in {tmp_path / 'local'}/")
        local = Examples([str(tmp_path / "local")]).database
        assert list(local.fetch(b"key")) == [b"found"]
        assert list(local.fetch(b"key.secondary")) == [b"shrunk"]

    def test_with_a_folder_named_the_folder_takes_them(
        self, server: RedisServer, tmp_path: Path
    ) -> None:
        """A folder given with --db is where what Redis missed goes (it gets every save anyway)."""
        examples = Examples([server.url, str(tmp_path / "copy")], local=tmp_path / "unused")
        server.stop()
        examples.database.save(b"key", b"found")
        assert list(Examples([str(tmp_path / "copy")]).database.fetch(b"key")) == [b"found"]
        assert not (tmp_path / "unused").exists()
