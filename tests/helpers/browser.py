"""A real headless Chromium, driven over the DevTools protocol on a pipe.

The pages kcache draws (and the docs site) are checked where people look at
them: in Debian's `chromium`, which `scripts/ensure-debian-package` installs.
The protocol runs over `--remote-debugging-pipe` (file descriptors 3 and 4,
messages ended by a NUL byte), so no port is opened and nothing beyond the
browser is needed.  Every wait is for an event the browser sends (a load, a
reply, a promise settling), bounded only against a browser that hangs.
"""

from __future__ import annotations

import base64
import json
import os
import select
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from io import BytesIO
from pathlib import Path
from typing import Any

import attrs
from PIL import Image

#: where Debian's package puts the browser
CHROMIUM = Path("/usr/bin/chromium")
#: the flags the browser tests run it with: no sandbox (root), no GPU, nothing fetched
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--remote-debugging-pipe",
)
#: how long a reply or event may take before the browser is taken to hang (seconds)
PATIENCE = 120.0


class BrowserError(AssertionError):
    """The browser is missing, died, or answered a command with an error."""


@attrs.frozen
class Rendered:
    """What a page showed: its text, what scripts asked of it, its console errors, a picture."""

    text: str
    answers: dict[str, Any]
    errors: list[str]
    png: bytes


class _Pipe:
    """The DevTools protocol over a pair of pipes: one command at a time, events kept."""

    def __init__(self, to_browser: int, from_browser: int, log: Path) -> None:
        self.to_browser, self.from_browser = to_browser, from_browser
        #: what chromium printed, for the message when it dies
        self.log = log
        self.buffer = b""
        self.events: list[dict[str, Any]] = []
        self.next_id = 0

    def send(self, method: str, params: dict[str, Any] | None = None, session: str = "") -> Any:
        self.next_id += 1
        message: dict[str, Any] = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        try:
            os.write(self.to_browser, json.dumps(message).encode() + b"\0")
        except BrokenPipeError:
            raise self._died() from None
        while True:
            reply = self._read()
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method: str) -> dict[str, Any]:
        """The first event called `method` (received already, or the next to come)."""
        while True:
            for event in self.events:
                if event.get("method") == method:
                    self.events.remove(event)
                    return event
            self.events.append(self._read())

    def _died(self) -> BrowserError:
        said = self.log.read_text(errors="replace").strip().splitlines()[-15:]
        return BrowserError("chromium exited; its last lines:\n" + "\n".join(said))

    def _read(self) -> dict[str, Any]:
        while b"\0" not in self.buffer:
            ready, _, _ = select.select([self.from_browser], [], [], PATIENCE)
            if not ready:
                raise BrowserError(f"chromium sent nothing for {PATIENCE:g} s")
            chunk = os.read(self.from_browser, 1 << 20)
            if not chunk:
                raise self._died()
            self.buffer += chunk
        message, _, self.buffer = self.buffer.partition(b"\0")
        result: dict[str, Any] = json.loads(message)
        return result


def require_chromium() -> Path:
    """The browser's path; a clear failure (never a skip) when it is not installed."""
    if not CHROMIUM.exists():
        raise BrowserError(
            f"{CHROMIUM} is missing: the browser tests need Debian's chromium; run "
            "scripts/ensure-debian-package /usr/bin/chromium chromium as root "
            "(tox -e browser and .ci/run do)"
        )
    return CHROMIUM


@contextmanager
def chromium() -> Iterator[Browser]:
    """A headless Chromium with a fresh profile, stopped on the way out."""
    path = require_chromium()
    to_browser_r, to_browser_w = os.pipe()
    from_browser_r, from_browser_w = os.pipe()

    # the browser reads commands on fd 3 and writes replies on fd 4: bash puts the pipes there
    # (dash takes only one-digit descriptors, and pytest holds many open)
    onto_3_and_4 = f'exec "$0" "$@" 3<&{to_browser_r} 4>&{from_browser_w}'
    # the browser's helpers may still write the profile as it stops: its removal is best effort
    with tempfile.TemporaryDirectory(
        prefix="kcache-chromium-", ignore_cleanup_errors=True
    ) as profile:
        log = Path(profile) / "chromium.log"
        with log.open("wb") as stderr:
            process = subprocess.Popen(
                ["/bin/bash", "-c", onto_3_and_4, str(path), *FLAGS, f"--user-data-dir={profile}"],
                stdin=subprocess.DEVNULL,
                stdout=stderr,
                stderr=stderr,
                pass_fds=(to_browser_r, from_browser_w),
            )
        os.close(to_browser_r)
        os.close(from_browser_w)
        try:
            yield Browser(_Pipe(to_browser_w, from_browser_r, log))
        finally:
            process.terminate()
            process.wait(timeout=PATIENCE)
            os.close(to_browser_w)
            os.close(from_browser_r)


class Browser:
    """Opens pages in one browser and reports what each showed."""

    def __init__(self, pipe: _Pipe) -> None:
        self.pipe = pipe

    def render(
        self,
        url: str,
        queries: dict[str, str] | None = None,
        *,
        width: int = 1280,
        height: int = 900,
        ready: str = "",
    ) -> Rendered:
        """Open `url` in a new tab of `width` x `height`, wait for its load event (and for
        the promise the `ready` expression gives, if any), evaluate each of `queries`
        (name -> JavaScript expression giving JSON), take a screenshot of the viewport."""
        pipe = self.pipe
        target = pipe.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = pipe.send("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        for domain in ("Page", "Runtime", "Log"):
            pipe.send(f"{domain}.enable", session=session)
        pipe.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
            session=session,
        )
        pipe.events.clear()
        pipe.send("Page.navigate", {"url": url}, session=session)
        pipe.wait_for("Page.loadEventFired")
        if ready:
            self._evaluate(session, ready)
        answers = {
            name: self._evaluate(session, script) for name, script in (queries or {}).items()
        }
        text = self._evaluate(session, "document.body.innerText")
        shot = pipe.send("Page.captureScreenshot", {"format": "png"}, session=session)
        errors = _errors(pipe.events)
        pipe.send("Target.closeTarget", {"targetId": target})
        return Rendered(text, answers, errors, base64.b64decode(shot["data"]))

    def _evaluate(self, session: str, expression: str) -> Any:
        reply = self.pipe.send(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
            session=session,
        )
        if "exceptionDetails" in reply:
            raise BrowserError(f"{expression}: {reply['exceptionDetails']}")
        return reply["result"].get("value")


def _errors(events: list[dict[str, Any]]) -> list[str]:
    """Console errors, uncaught exceptions and error log entries (a blocked fetch among them)."""
    found = []
    for event in events:
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            found.append(" ".join(str(arg.get("value", arg)) for arg in params.get("args", [])))
        elif method == "Runtime.exceptionThrown":
            found.append(str(params.get("exceptionDetails", {})))
        elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
            found.append(f"{params['entry'].get('source')}: {params['entry'].get('text')}")
    return found


@attrs.frozen
class Picture:
    """A screenshot's size and how many pixels it has of each colour."""

    width: int
    height: int
    colours: dict[tuple[int, int, int], int]

    def count(self, hex_colour: str) -> int:
        """Pixels of exactly `#rrggbb`."""
        rgb = tuple(int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
        return self.colours.get(rgb, 0)  # type: ignore[call-overload]


def picture(png: bytes, name: str, folder: Path) -> Picture:
    """Decode a screenshot, keeping it as `folder/name.png` (and under $KCACHE_SCREENSHOTS,
    when set, to look at after the run)."""
    (folder / f"{name}.png").write_bytes(png)
    kept = os.environ.get("KCACHE_SCREENSHOTS")
    if kept:
        Path(kept).mkdir(parents=True, exist_ok=True)
        (Path(kept) / f"{name}.png").write_bytes(png)
    image = Image.open(BytesIO(png)).convert("RGB")
    colours: dict[tuple[int, int, int], int] = {}
    for count, colour in image.getcolors(maxcolors=image.width * image.height) or []:
        colours[colour] = count
    return Picture(image.width, image.height, colours)


def inked(png: bytes, box: tuple[float, float, float, float]) -> float:
    """The share of the pixels in `box` (x, y, width, height) that are not near white:
    how much of a region was drawn on."""
    x, y, width, height = (round(value) for value in box)
    image = Image.open(BytesIO(png)).convert("L").crop((x, y, x + width, y + height))
    dark = sum(count for level, count in enumerate(image.histogram()) if level < 200)
    return dark / max(width * height, 1)
