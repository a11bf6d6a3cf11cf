"""Tests for `kcache.targets.adapter`: the client against the Python server and broken adapters."""

from __future__ import annotations

import io
import sys
import time
import types
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import attrs
import pytest
from helpers.builders import pod as built_pod
from helpers.paths import TESTS

from kcache.documents import parse_json
from kcache.errors import AdapterError
from kcache.ops import Outcome, Run, call
from kcache.spec.cache import Cache
from kcache.spec.errors import Fatal, PodNotFoundError, TransitionError, UnsupportedOperation
from kcache.spec.objects import node_from_manifest, pod_from_manifest
from kcache.spec.releases import V1_35, V1_36, V1_37
from kcache.targets.adapter import server
from kcache.targets.adapter.client import AdapterCache, AdapterFactory, _read_key
from kcache.targets.adapter.process import AdapterProcess
from kcache.traces import trace
from kcache.traces.replay import Verdict, replay_trace

VECTORS = sorted(trace.load_paths([TESTS / "vectors"]), key=lambda t: t.name)
BROKEN = [sys.executable, str(TESTS / "data" / "adapters" / "broken_adapter.py")]
SERVER = [sys.executable, "-m", "kcache.targets.adapter.server", "--impl"]


def pod(uid: str, node: str = "n1") -> Any:
    return pod_from_manifest(
        {"metadata": {"name": "p", "namespace": "default", "uid": uid}, "spec": {"nodeName": node}}
    )


def node(name: str) -> Any:
    return node_from_manifest({"metadata": {"name": name}})


def _recorded(process: AdapterProcess, monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Every request `process` sends from now on, as the adapter reads it."""
    sent: list[dict[str, Any]] = []
    ask = process.request

    def request(message: Any, timeout: float | None = None, *, encoded: str = "") -> Any:
        sent.append(parse_json(encoded, "request") if encoded else dict(message))
        return ask(message, timeout, encoded=encoded)

    monkeypatch.setattr(process, "request", request)
    return sent


def _ops(sent: list[dict[str, Any]]) -> list[str]:
    return [message["op"] for message in sent]


@pytest.fixture(scope="module")
def spec_server() -> Iterator[AdapterFactory]:
    """One server process for the whole module: each cache begins with `init`."""
    with AdapterFactory([*SERVER, "spec"]) as factory:
        yield factory


@pytest.fixture
def cache(spec_server: AdapterFactory) -> AdapterCache:
    return spec_server(ttl=Decimal(10), release=V1_35)


class TestVectorsThroughTheServer:
    @pytest.mark.parametrize("vector", VECTORS, ids=lambda t: t.name)
    def test_vector_passes(self, spec_server: AdapterFactory, vector: trace.Trace) -> None:
        """The model behind the protocol passes every bundled vector, as it does in process."""
        result = replay_trace(vector, spec_server)
        assert result.verdict is Verdict.PASSED, str(result.mismatch)


class TestClient:
    def test_handshake_names_the_adapter_and_its_releases(
        self, spec_server: AdapterFactory
    ) -> None:
        """The server reports what it serves and that the model has both releases."""
        assert spec_server.process.name == "kcache --impl spec"
        assert spec_server.releases == ("v1.35", "v1.36", "v1.37", "v1.38")

    def test_refusal_comes_back_as_its_spec_errors_class(self, cache: AdapterCache) -> None:
        """error.class maps back to the spec.errors class, with upstream's text."""
        cache.assume_pod(pod("u1"))
        with pytest.raises(TransitionError, match=r"pod u1\(default/p\) is in the cache"):
            cache.assume_pod(pod("u1"))
        with pytest.raises(PodNotFoundError):
            cache.get_pod(pod("u9"))

    def test_fatal_comes_back_as_fatal_and_ends_the_cache(
        self, spec_server: AdapterFactory, cache: AdapterCache
    ) -> None:
        """After a fatal answer the cache is gone; the next factory call starts afresh."""
        cache.add_pod(pod("u1", "n1"))
        with pytest.raises(Fatal, match="different node"):
            cache.update_pod(pod("u1", "n1"), pod("u1", "n2"))
        with pytest.raises(RuntimeError, match="ended with a fatal outcome"):
            cache.pod_count()
        assert spec_server(ttl=Decimal(0), release=V1_35).pod_count() == 0

    def test_reads(self, cache: AdapterCache) -> None:
        """dump, counts, get_pod and is_assumed_pod carry the cache's answers."""
        cache.add_node(node("n1"))
        cache.assume_pod(pod("u1", "n1"))
        cache.add_pod(pod("u2", "n2"))
        dump = cache.dump()
        assert sorted(dump.nodes) == ["n1", "n2"]
        assert dump.nodes["n2"].has_node is False
        assert dump.assumed_pods == frozenset({"u1"})
        assert (cache.node_count(), cache.pod_count()) == (2, 2)
        assert cache.get_pod(pod("u2", "elsewhere")) == pod("u2", "n2")
        assert (cache.is_assumed_pod(pod("u1")), cache.is_assumed_pod(pod("u2"))) == (True, False)

    def test_prefetched_reads_take_one_request_until_the_cache_changes(
        self, cache: AdapterCache, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """`prefetch` asks every read in one batch; the reads then answer from it, errors
        included, until a change, after which they are asked again."""
        sent = _recorded(cache.process, monkeypatch)
        cache.add_node(node("n1"))
        cache.assume_pod(pod("u1", "n1"))
        snapshot = cache.new_snapshot()
        cache.update_snapshot(snapshot)
        sent.clear()
        reads = [("dump", ()), ("get_pod", (pod("u1"),)), ("get_pod", (pod("u9"),))]
        cache.prefetch([*reads, ("is_assumed_pod", (pod("u1"),)), ("view_snapshot", (snapshot,))])
        assert _ops(sent) == ["batch"]
        assert (cache.node_count(), cache.pod_count(), cache.is_assumed_pod(pod("u1"))) == (
            1,
            1,
            True,
        )
        assert cache.get_pod(pod("u1")) == pod("u1", "n1")
        with pytest.raises(PodNotFoundError):
            cache.get_pod(pod("u9"))
        assert snapshot.view().node_list == ("n1",)
        assert _ops(sent) == ["batch"]
        cache.forget_pod(pod("u1", "n1"))
        assert cache.pod_count() == 0
        assert _ops(sent) == ["batch", "forget_pod", "dump"]

    def test_a_change_and_the_reads_after_it_take_one_request(
        self, cache: AdapterCache, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Reads sent with the next change run after it, whatever its outcome, and answer the
        calls that follow; a refused change still brings them, a read not sent goes alone."""
        sent = _recorded(cache.process, monkeypatch)
        cache.add_node(node("n1"))
        cache.dump()  # kept, and out of date once the next change is made
        reads = [("dump", ()), ("get_pod", (pod("u1"),)), ("is_assumed_pod", (pod("u1"),))]
        cache.prefetch_with_next_change(reads)
        cache.assume_pod(pod("u1", "n1"))
        assert _ops(sent) == ["add_node", "dump", "sequence"]
        assert [each["op"] for each in sent[-1]["requests"]] == [
            "assume_pod",
            "dump",
            "get_pod",
            "is_assumed_pod",
        ]
        assert (cache.pod_count(), cache.is_assumed_pod(pod("u1"))) == (1, True)
        assert cache.get_pod(pod("u1")) == pod("u1", "n1")
        assert len(sent) == 3
        cache.prefetch_with_next_change(reads)
        with pytest.raises(TransitionError):
            cache.assume_pod(pod("u1", "n1"))
        assert cache.pod_count() == 1
        assert cache.is_assumed_pod(pod("u2")) is False
        assert _ops(sent[3:]) == ["sequence", "is_assumed_pod"]

    def test_reads_waiting_for_a_change_never_ride_with_a_schedulers_request(
        self, cache: AdapterCache, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A sequence carries cache requests only: a scheduler's request goes alone, and the
        waiting reads are dropped rather than sent with a later change."""
        sent: list[dict[str, Any]] = []

        def request(message: Any, timeout: float | None = None, *, encoded: str = "") -> Any:
            sent.append(parse_json(encoded, "request") if encoded else dict(message))
            return {"ok": True}

        monkeypatch.setattr(cache.process, "request", request)
        cache.prefetch_with_next_change([("dump", ()), ("get_pod", (pod("u1"),))])
        cache.request("new_scheduler", scheduler="c1")
        cache.add_node(node("n1"))
        assert _ops(sent) == ["new_scheduler", "add_node"]

    def test_a_skipped_read_is_asked_again_when_needed(
        self, cache: AdapterCache, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Reads ride with a change as optional; one the adapter skipped is not kept, so the
        call that needs it asks the adapter again, alone."""
        sent: list[dict[str, Any]] = []
        dump = {"ok": True, "nodes": {}, "assumed": [], "node_count": 0, "pod_count": 0}

        def request(message: Any, timeout: float | None = None, *, encoded: str = "") -> Any:
            sent.append(parse_json(encoded, "request") if encoded else dict(message))
            if message["op"] == "sequence":
                return {"ok": True, "answers": [{"ok": True}, {"ok": False, "skipped": True}]}
            return dump

        monkeypatch.setattr(cache.process, "request", request)
        cache.prefetch_with_next_change([("dump", ())])
        cache.add_node(node("n1"))
        assert sent[-1]["optional_reads"] is True
        assert cache.node_count() == 0
        assert _ops(sent) == ["sequence", "dump"]

    def test_pod_reads_carry_the_pods_key_alone(
        self, cache: AdapterCache, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """get_pod and is_assumed_pod send what upstream looks the pod up by (its UID) and
        names it by (namespace and name), not the whole object."""
        sent = _recorded(cache.process, monkeypatch)
        cache.add_pod(pod("u1", "n1"))
        assert cache.get_pod(pod("u1", "elsewhere")) == pod("u1", "n1")
        with pytest.raises(PodNotFoundError, match=r"pod u9\(default/p\) does not exist"):
            cache.get_pod(pod("u9"))
        assert cache.is_assumed_pod(pod("u1", "elsewhere")) is False
        key = {"metadata": {"uid": "u1", "namespace": "default", "name": "p"}}
        assert sent[1:] == [
            {"op": "get_pod", "pod": key},
            {"op": "get_pod", "pod": {"metadata": {**key["metadata"], "uid": "u9"}}},
            {"op": "is_assumed_pod", "pod": key},
        ]

    def test_replay_sends_the_steps_as_one_sequence_with_their_outcomes(
        self, spec_server: AdapterFactory, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """`replay` gives each step the outcome it has one by one: refusals, a fatal one, and
        after it the ended cache's, reads among them; with a scheduling cycle among the steps,
        each goes alone."""
        steps: list[tuple[str, dict[str, Any]]] = [
            ("add_node", {"node": node("n1")}),
            ("add_pod", {"pod": pod("u1", "n1")}),
            ("add_pod", {"pod": pod("u1", "n1")}),
            ("update_snapshot", {"snapshot": "s1"}),
            ("update_pod", {"old": pod("u1", "n1"), "new": pod("u1", "n2")}),
            ("remove_node", {"node": node("n1")}),
        ]
        one_by_one = Run(spec_server(ttl=Decimal(0), release=V1_35))
        expected = [call(one_by_one.apply, op, args)[0] for op, args in steps]
        assert [o.kind for o in expected] == ["ok", "ok", "error", "ok", "fatal", "crash"]
        sent = _recorded(spec_server.process, monkeypatch)
        run = Run(spec_server(ttl=Decimal(0), release=V1_35))
        assert run.cache.replay(run, steps) == expected
        assert _ops(sent) == ["init", "sequence"]
        assert list(run.snapshots) == ["s1"]
        sent.clear()
        run = Run(spec_server(ttl=Decimal(0), release=V1_36))  # get_node: v1.36 on
        reads = [("get_node", {"name": "n1"}), ("get_node", {"name": "n9"})]
        outcomes = run.cache.replay(run, [*steps[:2], *reads, *reads])
        missing = "NodeNotFoundError"
        assert [o.error_class for o in outcomes] == ["", "", "", missing, "", missing]
        assert _ops(sent) == ["init", "sequence"]
        assert "unchanged" not in sent[-1]  # the same read twice answers whole each time
        sent.clear()
        run = Run(spec_server(ttl=Decimal(0), release=V1_37))
        cycle = ("schedule_one", {"pod": pod("u2", "")})
        assert run.cache.replay(run, [steps[0], cycle]) == [Outcome("ok")] * 2
        assert _ops(sent)[:2] == ["init", "add_node"]

    def test_unchanged_answers_are_read_once(
        self, cache: AdapterCache, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A read the adapter answers `unchanged` gives the result read from its last answer:
        the very same object, not read again; a changed answer is read anew."""
        sent = _recorded(cache.process, monkeypatch)
        reads = [("dump", ()), ("get_pod", (pod("u1"),)), ("is_assumed_pod", (pod("u1"),))]
        cache.add_pod(pod("u1", "n1"))
        cache.prefetch(reads)
        dump, held = cache.dump(), cache.get_pod(pod("u1"))
        cache.prefetch_with_next_change(reads)
        cache.add_node(node("n1"))
        assert sent[-1]["unchanged"] is True
        assert cache.get_pod(pod("u1")) is held
        assert cache.dump() is not dump
        assert cache.dump().nodes["n1"].has_node is True
        assert (cache.pod_count(), cache.is_assumed_pod(pod("u1"))) == (1, False)

    def test_get_pod_answers_the_cached_version_whole(self, cache: AdapterCache) -> None:
        """The pod the cache holds comes back, not the argument: requests, ports, affinity."""
        held = pod_from_manifest(
            {
                "metadata": {"name": "p", "namespace": "default", "uid": "u1"},
                "spec": {
                    "nodeName": "n1",
                    "containers": [
                        {
                            "resources": {"requests": {"cpu": "250m"}},
                            "ports": [{"containerPort": 80, "hostPort": 8080}],
                        }
                    ],
                    "affinity": {"podAntiAffinity": {}},
                },
            }
        )
        cache.add_pod(held)
        got = cache.get_pod(pod("u1"))
        assert got == held
        assert (got.requests.milli_cpu, got.host_ports, got.has_affinity) == (
            250,
            (("0.0.0.0", "TCP", 8080),),
            True,
        )

    def test_times_travel_exactly(self, spec_server: AdapterFactory) -> None:
        """A deadline a float would round away is kept: 0.1 + 0.2 is not yet past 0.3."""
        cache = spec_server(ttl=Decimal("0.2"), release=V1_35)
        cache.assume_pod(pod("u1"))
        cache.finish_binding(pod("u1"), Decimal("0.1"))
        cache.cleanup(Decimal("0.3"))
        assert cache.is_assumed_pod(pod("u1")) is True
        cache.cleanup(Decimal("0.3000000000000000000001"))
        assert cache.is_assumed_pod(pod("u1")) is False

    def test_snapshots_are_named_and_independent(self, cache: AdapterCache) -> None:
        """Each new_snapshot is its own object in the adapter; only an update changes it."""
        first, second = cache.new_snapshot(), cache.new_snapshot()
        cache.add_node(node("n1"))
        cache.update_snapshot(first)
        assert first.view().node_list == ("n1",)
        assert second.view().node_list == ()

    def test_release_is_passed_to_the_cache(self, spec_server: AdapterFactory) -> None:
        """init carries the release: v1.36 has no expiry pass, v1.35 has."""
        spec_server(ttl=Decimal(0), release=V1_35).cleanup(Decimal(1))
        with pytest.raises(UnsupportedOperation, match=r"cleanup does not exist in release v1\.36"):
            spec_server(ttl=Decimal(0), release=V1_36).cleanup(Decimal(1))

    def test_only_the_newest_cache_is_usable(self, spec_server: AdapterFactory) -> None:
        """One adapter holds one cache: an older cache refuses instead of reading the new one."""
        old = spec_server(ttl=Decimal(0), release=V1_35)
        spec_server(ttl=Decimal(0), release=V1_35)
        with pytest.raises(RuntimeError, match="replaced this one"):
            old.pod_count()


class TestBrokenAdapters:
    """Every way an adapter can fail is an AdapterError, the process gone, no hang."""

    def failure(self, mode: str, **timeouts: float) -> str:
        factory = AdapterFactory([*BROKEN, mode], **timeouts)
        try:
            with pytest.raises(AdapterError) as caught:
                factory(ttl=Decimal(0), release=V1_35).pod_count()
        finally:
            factory.close()
        return str(caught.value)

    def test_crash_quotes_exit_status_and_stderr(self) -> None:
        """An adapter that dies mid-request is reported with its last words."""
        message = self.failure("crash")
        first_line, *rest = message.splitlines()
        assert first_line.endswith(
            "crash: it closed its output (exit status 3) before the answer to dump"
        )
        assert rest == [
            "its last stderr lines:",
            "  adapter: panic: assignment to entry in nil map",
        ]

    def test_hang_times_out_and_the_process_group_is_killed(self) -> None:
        """No answer within the step timeout: the adapter and its children are killed."""
        message = self.failure("hang", step_timeout=0.5)
        assert "the answer to dump did not come within 0.5 s" in message.splitlines()[0]
        child = int(message.rsplit("child pid ", 1)[1].split()[0])
        assert _dies_soon(child)

    def test_silence_at_start_times_out(self) -> None:
        """An adapter that never writes its handshake hits the start timeout."""
        assert "the handshake did not come within 0.5 s" in self.failure(
            "silent", start_timeout=0.5
        )

    def test_garbage_is_not_an_answer(self) -> None:
        """A line that is not JSON is quoted."""
        message = self.failure("garbage")
        assert "the answer to dump is not JSON kcache reads (line 1, column 1: invalid JSON: " in (
            message
        )
        assert message.endswith("): 'hello, world'") or "): 'hello, world'\n" in message

    def test_wrong_handshake(self) -> None:
        """Something that is not a kcache adapter is recognised at once."""
        message = self.failure("wrong-handshake")
        assert 'the handshake \'{"hello":"adapter"}\' is not {"kcache_adapter": 1' in message

    def test_newer_protocol_version(self) -> None:
        """A handshake with another protocol version is refused."""
        assert '"kcache_adapter":2' in self.failure("newer-protocol")

    def test_unknown_error_class(self) -> None:
        """An error class outside the protocol's list is the adapter's fault."""
        assert "names an unknown error class" in self.failure("unknown-class")

    def test_unreadable_pod_is_the_adapters_fault(self) -> None:
        """A get_pod answer whose pod does not read is a wrong shape, naming the field."""
        factory = AdapterFactory([*BROKEN, "unreadable-pod"])
        try:
            cache = factory(ttl=Decimal(0), release=V1_35)
            with pytest.raises(AdapterError, match=r"wrong shape .*spec\.containers"):
                cache.get_pod(pod("u1"))
        finally:
            factory.close()

    def test_extra_answer_is_never_taken_for_the_next_one(self) -> None:
        """Answers come strictly in turn: a second answer to one request is an error, either
        seen waiting before the next request or read as the next answer's wrong shape."""
        factory = AdapterFactory([*BROKEN, "two-answers"])
        try:
            cache = factory(ttl=Decimal(0), release=V1_35)
            cache.add_node(node("n1"))
            with pytest.raises(AdapterError, match=r"nobody asked for|wrong shape"):
                cache.dump()
        finally:
            factory.close()

    def test_unchanged_for_a_read_never_answered(self) -> None:
        """`unchanged` for a read the adapter never answered stands for nothing: broken."""
        with AdapterFactory([*BROKEN, "unchanged-unasked"]) as factory:
            cache = factory(ttl=Decimal(0), release=V1_35)
            with pytest.raises(AdapterError, match="unchanged, never answered"):
                cache.prefetch([("dump", ()), ("get_pod", (pod("u1"),))])

    def test_missing_command(self, tmp_path: Path) -> None:
        """A command that does not exist cannot start."""
        factory = AdapterFactory([str(tmp_path / "no-such-adapter")])
        with pytest.raises(AdapterError, match="no-such-adapter: cannot start: No such file"):
            factory(ttl=Decimal(0), release=V1_35)

    def test_unmodelled_release_is_refused_before_init(self) -> None:
        """The broken adapter models only v1.35; asking for v1.36 sends nothing."""
        factory = AdapterFactory([*BROKEN, "crash"])
        try:
            with pytest.raises(ValueError, match=r"does not model release v1\.36"):
                factory(ttl=Decimal(0), release=V1_36)
        finally:
            factory.close()


def _dies_soon(pid: int) -> bool:
    """Whether `pid` is gone within a few seconds: SIGKILL lands when the process next runs."""
    for _ in range(500):
        if not _alive(pid):
            return True
        time.sleep(0.01)
    return False


def _alive(pid: int) -> bool:
    """Whether `pid` still runs (a zombie waiting for its reaper does not count)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


class TestServer:
    """The server in process: one request line in, one answer out."""

    def serve(self, *requests: str, impl: Any = Cache) -> list[dict[str, Any]]:
        answers = io.StringIO()
        assert server.serve(impl, "test", [r + "\n" for r in requests], answers) == 0
        return [parse_json(line, "answer") for line in answers.getvalue().splitlines()]

    def test_handshake_first(self) -> None:
        """The first line is the handshake, before any request."""
        assert self.serve() == [
            {
                "kcache_adapter": 1,
                "name": "test",
                "releases": ["v1.35", "v1.36", "v1.37", "v1.38"],
                "batch": True,
                "sequence": True,
                "unchanged": True,
            }
        ]

    def test_requests_are_read_by_the_rules_of_every_input(self) -> None:
        """Bytes that are not UTF-8, a lone surrogate, a repeated key: a protocol error each,
        naming what was wrong, and the session goes on."""
        answers = io.StringIO()
        requests = [
            b'{"op": "init", "release": "v1.37"}\n',
            b'{"op": "caf\xe9"}\n',
            b'{"op": "add_node", "node": {"metadata": {"name": "\\ud800"}}}\n',
            b'{"op": "observe", "op": "observe"}\n',
            b'{"op": "node_count"}\n',
        ]
        assert server.serve(Cache, "test", requests, answers) == 0
        _, init, *refused, last = answers.getvalue().splitlines()
        assert parse_json(init, "answer") == {"ok": True}
        assert [parse_json(line, "answer")["protocol_error"] for line in refused] == [
            "not a JSON request: request: line 1: byte 0xe9 is not UTF-8 text",
            "not a JSON request: request: line 1: node.metadata.name: holds a lone surrogate "
            "(\\ud800 to \\udfff alone), which is not text",
            "not a JSON request: request: line 1: key 'op' appears twice in one object",
        ]
        assert parse_json(last, "answer") == {
            "ok": False,
            "protocol_error": 'unknown op "node_count"',
        }

    def test_batch_answers_each_read_as_if_alone(self) -> None:
        """A batch's answers are the answers its reads get one by one, errors included."""
        setup = [
            '{"op": "init", "release": "v1.37"}',
            '{"op": "add_node", "node": {"metadata": {"name": "n1"}}}',
            '{"op": "assume_pod", "pod": {"metadata": {"name": "p", "uid": "u1"},'
            ' "spec": {"nodeName": "n1"}}}',
        ]
        reads = [
            '{"op": "dump"}',
            '{"op": "get_pod", "pod": {"metadata": {"name": "p", "uid": "u1"}, "spec": {}}}',
            '{"op": "get_pod", "pod": {"metadata": {"name": "q", "uid": "u9"}, "spec": {}}}',
            '{"op": "is_assumed_pod", "pod": {"metadata": {"name": "p", "uid": "u1"}}}',
            '{"op": "view_snapshot", "snapshot": "s1"}',
        ]
        alone = self.serve(*setup, *reads)[len(setup) + 1 :]
        batch = '{"op": "batch", "requests": [' + ", ".join(reads) + "]}"
        (answer,) = self.serve(*setup, batch)[len(setup) + 1 :]
        assert answer == {"ok": True, "answers": alone}
        assert alone[2]["error"]["class"] == "PodNotFoundError"

    def test_batch_carries_reads_only(self) -> None:
        """A change in a batch is refused and not made; a batch without a list is refused."""
        init = '{"op": "init", "release": "v1.37"}'
        add = '{"op": "add_node", "node": {"metadata": {"name": "n1"}}}'
        _, _, batch, dump, bare = self.serve(
            init,
            '{"op": "batch", "requests": [' + add + ', {"op": "dump"}]}',
            '{"op": "dump"}',
            '{"op": "batch"}',
        )
        refused, read = batch["answers"]
        assert refused["protocol_error"].startswith("batch: not a read: ")
        assert read["nodes"] == dump["nodes"] == {}
        assert bare["protocol_error"] == (
            'batch takes "requests", a list, and "unchanged" (optional), a boolean'
        )

    def test_sequence_answers_each_request_as_if_alone_up_to_a_fatal_one(self) -> None:
        """A sequence runs changes and reads in turn, each answered as alone; after a fatal
        answer it stops, and the cache is gone."""
        placed = '{"metadata": {"name": "p", "uid": "u1"}, "spec": {"nodeName": "n1"}}'
        add = '{"op": "add_pod", "pod": ' + placed + "}"
        steps = [
            '{"op": "init", "release": "v1.37"}',
            '{"op": "add_node", "node": {"metadata": {"name": "n1"}}}',
            add,
            add,
            '{"op": "dump"}',
            '{"op": "update_snapshot", "snapshot": "s1"}',
            '{"op": "view_snapshot", "snapshot": "s1"}',
        ]
        alone = self.serve(*steps)[1:]
        _, sequence = self.serve(
            steps[0], '{"op": "sequence", "requests": [' + ", ".join(steps[1:]) + "]}"
        )[1:]
        assert sequence == {"ok": True, "answers": alone[1:]}
        assert alone[3]["error"]["class"] == "TransitionError"
        moved = placed.replace('"n1"', '"n2"')
        fatal = '{"op": "update_pod", "old": ' + placed + ', "new": ' + moved + "}"
        _, ended, after = self.serve(
            steps[0],
            '{"op": "sequence", "requests": [' + f'{add}, {fatal}, {{"op": "dump"}}' + "]}",
            '{"op": "dump"}',
        )[1:]
        assert [sorted(answer) for answer in ended["answers"]] == [["ok"], ["fatal", "ok"]]
        assert "send init first" in after["protocol_error"]

    def test_a_read_answered_the_same_before_answers_unchanged_when_asked(self) -> None:
        """With `unchanged`, a read whose answer is the one last given to the same read in a
        batch or sequence since init answers `unchanged`; a new answer comes whole."""
        add = '{"op": "add_node", "node": {"metadata": {"name": "n1"}}}'
        reads = '{"op": "dump"}, {"op": "view_snapshot", "snapshot": "s1"}'
        asked = '{"op": "batch", "requests": [' + reads + '], "unchanged": true}'
        changed = '{"op": "sequence", "requests": [' + add + ", " + reads + '], "unchanged": true}'
        init = '{"op": "init", "release": "v1.37"}'
        answers = self.serve(init, asked, asked, changed, changed, init, asked)[1:]
        first, again, added, same = (answer["answers"] for answer in answers[1:5])
        after_init = answers[6]["answers"]
        unchanged = {"ok": True, "unchanged": True}
        assert first[0]["nodes"] == {} and first[1]["snapshot"]["node_list"] == []
        assert again == [unchanged, unchanged]
        assert added[0] == {"ok": True} and added[1]["nodes"]["n1"]["has_node"] is True
        assert added[2] == unchanged  # the snapshot was not updated
        assert same == [{"ok": True}, unchanged, unchanged]
        assert after_init == first
        plain = '{"op": "batch", "requests": [' + reads + "]}"
        assert self.serve(init, plain, plain)[3]["answers"] == first

    def test_an_optional_read_that_would_be_fatal_is_skipped_and_the_cache_kept(self) -> None:
        """With `optional_reads`, a read of a sequence that would end the cache answers
        `skipped` and the cache stays; without it, the same read ends the cache."""

        class DumpPanics(Cache):
            def dump(self) -> Any:
                raise Fatal("the dump panicked")

        init = '{"op": "init", "release": "v1.37"}'
        add = '{"op": "add_node", "node": {"metadata": {"name": "n1"}}}'
        reads = '{"op": "dump"}, {"op": "get_node", "name": "n1"}'
        optional = '{"op": "sequence", "requests": [' + add + ", " + reads + "]"
        optional += ', "optional_reads": true}'
        plain = '{"op": "sequence", "requests": [' + reads + "]}"
        _, _, kept, ended, after = self.serve(
            init, optional, plain, '{"op": "dump"}', impl=DumpPanics
        )
        assert kept["answers"][:2] == [{"ok": True}, {"ok": False, "skipped": True}]
        assert kept["answers"][2]["node"]["has_node"] is True
        assert ended["answers"] == [{"ok": False, "fatal": "the dump panicked"}]
        assert "send init first" in after["protocol_error"]

    def test_an_optional_read_the_adapter_cannot_make_is_skipped_and_the_cache_kept(
        self,
    ) -> None:
        """With `optional_reads`, a read that fails in the adapter's own code (a view of a
        state between two steps of a rule) answers `skipped`, and later requests still run;
        asked plainly, the same read is the adapter's internal error."""

        class DumpBreaks(Cache):
            def dump(self) -> Any:
                raise AssertionError("a list entry without a node")

        init = '{"op": "init", "release": "v1.37"}'
        add = '{"op": "add_node", "node": {"metadata": {"name": "n1"}}}'
        optional = '{"op": "sequence", "requests": [' + add + ', {"op": "dump"}]'
        optional += ', "optional_reads": true}'
        _, _, kept, node, plain = self.serve(
            init, optional, '{"op": "get_node", "name": "n1"}', '{"op": "dump"}', impl=DumpBreaks
        )
        assert kept["answers"] == [{"ok": True}, {"ok": False, "skipped": True}]
        assert node["node"]["has_node"] is True
        assert plain["protocol_error"] == (
            "internal error: AssertionError: a list entry without a node"
        )

    def test_sequence_carries_cache_requests_only(self) -> None:
        """init, batch or another sequence in a sequence is refused and not run."""
        init = '{"op": "init", "release": "v1.37"}'
        inner = [init, '{"op": "batch", "requests": []}', '{"op": "dump"}']
        _, _, sequence, bare = self.serve(
            init,
            '{"op": "add_node", "node": {"metadata": {"name": "n1"}}}',
            '{"op": "sequence", "requests": [' + ", ".join(inner) + "]}",
            '{"op": "sequence"}',
        )[1:]
        refused_init, refused_batch, dump = sequence["answers"]
        assert refused_init["protocol_error"].startswith("sequence: not a cache request: ")
        assert refused_batch["protocol_error"].startswith("sequence: not a cache request: ")
        assert dump["node_count"] == 1
        assert bare["protocol_error"] == (
            'sequence takes "requests", a list, and "unchanged" and "optional_reads" '
            "(optional), booleans"
        )

    def test_protocol_errors(self) -> None:
        """Unparseable requests, unknown ops and ops before init are protocol errors."""
        _, *answers = self.serve("not json", '{"op": "frobnicate"}', '{"op": "dump"}', "[]")
        assert [a["ok"] for a in answers] == [False] * 4
        assert answers[0]["protocol_error"].startswith("not a JSON request: ")
        assert answers[1]["protocol_error"] == 'unknown op "frobnicate"'
        assert answers[2]["protocol_error"].startswith("no cache: send init first")
        assert answers[3]["protocol_error"] == 'a request is a JSON object with an "op" string'

    def test_quit_stops_answering(self) -> None:
        """Nothing after quit is read."""
        init = '{"op": "init", "release": "v1.35"}'
        assert len(self.serve(init, '{"op": "quit"}', init)) == 2

    def test_bad_object_is_a_protocol_error(self) -> None:
        """A pod the server cannot read is refused, naming the field."""
        _, _, answer = self.serve(
            '{"op": "init", "release": "v1.35"}',
            '{"op": "add_pod", "pod": {"metadata": {"uid": "u1"}, "spec": {"containers": 3}}}',
        )
        assert "spec.containers" in answer["protocol_error"]

    def test_bug_in_the_cache_is_an_internal_error(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """An exception outside the protocol is answered, with its traceback on stderr."""

        class Broken(Cache):
            def pod_count(self) -> int:
                raise KeyError("u1")

        _, _, answer = self.serve(
            '{"op": "init", "release": "v1.35"}', '{"op": "dump"}', impl=Broken
        )
        assert answer == {"ok": False, "protocol_error": "internal error: KeyError: 'u1'"}
        assert "Traceback" in capsys.readouterr().err

    def test_unknown_target_exits_2(self, capsys: pytest.CaptureFixture[str]) -> None:
        """The server's own command line reports a bad target on stderr."""
        assert server.main(["--impl", "nope"]) == 2
        assert "unknown target" in capsys.readouterr().err

    def test_stray_output_does_not_reach_the_protocol(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A cache that prints cannot corrupt stdout: its output goes to stderr."""
        (tmp_path / "chatty_cache.py").write_text(
            "from kcache.spec.cache import Cache\n"
            "class Chatty(Cache):\n"
            "    def add_node(self, node):\n"
            "        print('adding', node.name)\n"
            "        super().add_node(node)\n"
        )
        monkeypatch.setenv("PYTHONPATH", str(tmp_path))
        with AdapterFactory([*SERVER, "chatty_cache:Chatty"]) as factory:
            cache = factory(ttl=Decimal(0), release=V1_35)
            cache.add_node(node("n1"))
            assert cache.node_count() == 1


class TestReadKey:
    """A pod read's request is made once per key the request depends on: the pod's uid,
    namespace and name (`_read_key`), whatever mapping type holds its metadata."""

    def test_a_pod_read_is_keyed_by_uid_namespace_and_name(self) -> None:
        assert _read_key("get_pod", (built_pod("u1", name="a"),)) == (
            "get_pod",
            "u1",
            "default",
            "a",
        )
        assert _read_key("is_assumed_pod", (built_pod("u1", name="a", cpu="1"),)) == (
            "is_assumed_pod",
            "u1",
            "default",
            "a",
        )
        assert _read_key("get_pod", (built_pod("u1", name="b"),)) != _read_key(
            "get_pod", (built_pod("u1", name="a"),)
        )
        assert _read_key("get_pod", (built_pod("u1", name="a", namespace="other"),)) == (
            "get_pod",
            "u1",
            "other",
            "a",
        )

    def test_metadata_in_another_mapping_is_keyed_alike(self) -> None:
        plain = built_pod("u1", name="a")
        manifest = {
            **plain.manifest,
            "metadata": types.MappingProxyType(plain.manifest["metadata"]),
        }
        proxied = attrs.evolve(plain, manifest=manifest)
        assert _read_key("get_pod", (proxied,)) == ("get_pod", "u1", "default", "a")
