"""An adapter that breaks the protocol in the way its first argument names (tests only)."""

import json
import subprocess
import sys
import time
from collections.abc import Callable

from empty_cache import EMPTY_CACHE_READS

HANDSHAKE = {"kcache_adapter": 1, "name": "broken", "releases": ["v1.35"]}


def send(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def answer_init_then(behaviour: Callable[[], None]) -> None:
    """Answer `init` properly, then misbehave on the next request."""
    send(json.dumps(HANDSHAKE))
    for line in sys.stdin:
        if json.loads(line)["op"] == "init":
            send('{"ok": true}')
        else:
            behaviour()


def crash() -> None:
    print("adapter: panic: assignment to entry in nil map", file=sys.stderr, flush=True)
    sys.exit(3)


def hang() -> None:
    child = subprocess.Popen(["sleep", "300"])
    print(f"child pid {child.pid}", file=sys.stderr, flush=True)
    time.sleep(300)


def garbage() -> None:
    send("hello, world")


def unknown_class() -> None:
    send('{"ok": false, "error": {"class": "OopsError", "message": "oops"}}')


def two_answers() -> None:
    send('{"ok": true}')
    send('{"ok": true}')


def unreadable_pod() -> None:
    send(
        '{"ok": true, "node": "n1", "pod": {"metadata": {"uid": "u1"}, "spec": {"containers": 3}}}'
    )


def crash_on_the_first_change() -> None:
    """An empty cache that dies on the first operation, as a real one dies mid-run."""
    send(json.dumps(HANDSHAKE))
    for line in sys.stdin:
        op = json.loads(line)["op"]
        if op not in EMPTY_CACHE_READS:
            crash()
        send(json.dumps(EMPTY_CACHE_READS[op]))


def unchanged_unasked() -> None:
    """Offers `unchanged`, then answers every read of a batch with it, none answered before."""
    send(json.dumps({**HANDSHAKE, "batch": True, "unchanged": True}))
    for line in sys.stdin:
        request = json.loads(line)
        if request["op"] == "batch":
            unchanged = [{"ok": True, "unchanged": True}] * len(request["requests"])
            send(json.dumps({"ok": True, "answers": unchanged}))
        else:
            send('{"ok": true}')


def wrong_handshake() -> None:
    send('{"hello": "adapter"}')
    time.sleep(300)


def newer_protocol() -> None:
    send('{"kcache_adapter": 2, "name": "from the future", "releases": []}')
    time.sleep(300)


BEHAVIOURS = {
    "crash": lambda: answer_init_then(crash),
    "hang": lambda: answer_init_then(hang),
    "garbage": lambda: answer_init_then(garbage),
    "unknown-class": lambda: answer_init_then(unknown_class),
    "two-answers": lambda: answer_init_then(two_answers),
    "unreadable-pod": lambda: answer_init_then(unreadable_pod),
    "crash-on-change": crash_on_the_first_change,
    "silent": lambda: time.sleep(300),
    "wrong-handshake": wrong_handshake,
    "newer-protocol": newer_protocol,
    "unchanged-unasked": unchanged_unasked,
}

BEHAVIOURS[sys.argv[1]]()
