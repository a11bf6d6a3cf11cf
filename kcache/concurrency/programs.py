"""Parallel programs: a sequential prefix, then 2-4 threads of calls, drawn to contend.

Every call is drawn (with `kcache.machine.strategies`) from small pools of
pods and nodes shared by the threads, so that they fight over the same keys;
`kcache.concurrency.execution` runs a program, `kcache.concurrency.parallel`
draws many.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

import attrs
from hypothesis import strategies as st

from kcache.concurrency import coverage
from kcache.machine import strategies
from kcache.spec.objects import Node, Pod, node_from_manifest
from kcache.spec.releases import DEFAULT_RELEASE, Release

#: the nodes a program's threads share: fewer than the machine's pools, so that
#: threads collide on them; the focus node is one of the first two, and the
#: third starts as a ghost (pods name it before any call adds it)
SHARED_NODE_NAMES = strategies.NODE_NAMES[:3]
SHARED_POD_NODE_NAMES = strategies.NODE_NAMES[:3]
#: short TTLs, so that pods finishing binding early in a run expire before it ends
EXPIRING_TTLS = (Decimal("0.25"), Decimal("0.5"), Decimal(1), Decimal(0))
THREAD_COUNTS = (2, 3, 4)
#: the pod every program is built around (its node is drawn per program)
FOCUS_POD = strategies.UIDS[0]
#: the node no program adds before its threads start, and the pod that makes it a ghost
GHOST_NODE = SHARED_NODE_NAMES[2]
GHOST_POD = strategies.UIDS[2]
#: steps (a call, or a pod's story of two or three calls) in the prefix and in each thread
MAX_PREFIX_STEPS = 4
MIN_THREAD_STEPS = 4
MAX_THREAD_STEPS = 8


@attrs.frozen
class Call:
    """One planned call; `finish_binding` takes its `now` from the virtual clock when made."""

    op: str
    args: Mapping[str, Any]
    #: an aimed program's write: a held run holds it inside the cache while the other
    #: threads make all their calls (`kcache.concurrency.execution.execute`)
    held: bool = False


@attrs.frozen
class Program:
    """What one parallel run does: a sequential prefix, then the threads' calls at once."""

    ttl: Decimal
    prefix: tuple[Call, ...]
    threads: tuple[tuple[Call, ...], ...]
    #: aimed at an expiry pass: a held run holds the loop's first pass inside the cache
    #: while the threads make all their calls
    held_pass: bool = False


@attrs.frozen
class _Pools:
    """The versions of each node and pod a program's calls choose from.

    `focus_node` and `focus_pod` are the shared objects the program is built
    around: calls name them about as often as everything else together, so
    that threads overlap on them.  `moved` holds the focus pod's key on the
    other of the first two nodes, for calls that name a held key's wrong node.
    """

    nodes: Mapping[str, tuple[Node, ...]]
    pods: Mapping[str, tuple[Pod, ...]]
    focus_node: str
    focus_pod: str
    moved: tuple[Pod, ...] = ()


@st.composite
def _node_versions(draw: st.DrawFn, name: str) -> tuple[Node, ...]:
    """One or two versions of a node; they share zone labels, so no call moves it between zones.

    A node in two zones makes the snapshot prune in map order (§10.3 step 4),
    which upstream leaves unspecified; keeping zones fixed keeps every
    outcome defined.
    """
    labels = draw(st.sampled_from(strategies.ZONE_LABELS))
    manifests = draw(
        st.lists(
            st.builds(
                strategies.node_manifest,
                name=st.just(name),
                labels=st.just(labels),
                allocatable=st.sampled_from(strategies.ALLOCATABLE),
                images=st.lists(st.sampled_from(strategies.IMAGES), max_size=2),
            ),
            min_size=1,
            max_size=2,
        )
    )
    return tuple(node_from_manifest(manifest) for manifest in manifests)


@st.composite
def _pod_pool(draw: st.DrawFn, focus_node: str) -> dict[str, tuple[Pod, ...]]:
    """Each UID's pod, and for some a second version with another pod's body, on its own node.

    The first UID is the focus pod, on the focus node.  A key keeps its node
    in every version: moving a key between nodes under a stale `old` stores
    it twice on one node (§14), after which which copy expires is map order
    upstream.  Borrowing bodies instead of drawing new ones keeps programs
    cheap to generate.
    """
    first = [
        draw(
            strategies.pods(
                uids=st.just(uid),
                node_names=st.just(
                    focus_node if uid == FOCUS_POD else GHOST_NODE if uid == GHOST_POD else None
                ).flatmap(
                    lambda name: (
                        st.sampled_from(SHARED_POD_NODE_NAMES) if name is None else st.just(name)
                    )
                ),
            )
        )
        for uid in strategies.UIDS
    ]
    pool: dict[str, tuple[Pod, ...]] = {}
    for index, pod in enumerate(first):
        body = first[(index + 1) % len(first)].manifest["spec"]
        pool[pod.uid] = (
            (pod, strategies.with_changes(pod, spec=body)) if draw(st.booleans()) else (pod,)
        )
    return pool


def _around(focus: list[Any], others: list[Any]) -> st.SearchStrategy[Any]:
    """One of `focus` half the time, otherwise any of `others` (which include the focus too)."""
    return st.one_of(st.sampled_from(focus), st.sampled_from(others))


def _steps(pools: _Pools, snapshot: str, release: Release) -> st.SearchStrategy[tuple[Call, ...]]:
    """One step of a thread: a write or a read on the shared pools, or a pod's life-cycle story.

    The stories are what the scheduler's own threads do to one pod (assume
    then bind; assume, bind, and the informer confirms; assume and give up),
    so that keys finish binding, expire and get confirmed while others look.
    `snapshot` is the thread's own snapshot.
    """
    nodes = [node for versions in pools.nodes.values() for node in versions]
    pods = [pod for versions in pools.pods.values() for pod in versions]
    node_pairs = [(old, new) for vs in pools.nodes.values() for old in vs for new in vs]
    focus_node_pairs = [
        (old, new) for old in pools.nodes[pools.focus_node] for new in pools.nodes[pools.focus_node]
    ]
    ghost_node_pairs = [
        (old, new) for old in pools.nodes[GHOST_NODE] for new in pools.nodes[GHOST_NODE]
    ]
    # `old` and `new` always name one node: held elsewhere, the call fails before any change
    pod_pairs = [(old, new) for vs in pools.pods.values() for old in vs for new in vs]
    focus = pools.pods[pools.focus_pod]
    focus_pod_pairs = [(old, new) for old in focus for new in focus]
    focus_pod_pairs += [(moved, moved) for moved in pools.moved]
    # the focus node, the ghost, the other node (not added in half the programs), any node
    node = st.one_of(
        *(st.sampled_from(pools.nodes[name]) for name in (pools.focus_node, GHOST_NODE)),
        st.sampled_from(
            [
                n
                for name, vs in pools.nodes.items()
                for n in vs
                if name not in (pools.focus_node, GHOST_NODE)
            ]
        ),
        st.sampled_from(nodes),
    )
    pod = _around(list(pools.pods[pools.focus_pod]), pods)
    # what writes name: the focus pod, its key on the other node, or any pod
    any_pod = st.one_of(
        st.sampled_from(pools.pods[pools.focus_pod]),
        st.sampled_from(pools.moved),
        st.sampled_from(pods),
    )
    names = st.sampled_from(list(pools.nodes))

    def on(op: str, name: str, values: st.SearchStrategy[Any]) -> st.SearchStrategy[Call]:
        return values.map(lambda value: Call(op, {name: value}))

    def pair(op: str, *pairs: list[tuple[Any, Any]]) -> st.SearchStrategy[Call]:
        return st.one_of(*(st.sampled_from(each) for each in pairs)).map(
            lambda p: Call(op, {"old": p[0], "new": p[1]})
        )

    # stories pick any pod alike, so that threads also bind different pods at once
    story_pod = st.sampled_from([*pods, *pools.moved])

    def story(*ops: str) -> st.SearchStrategy[tuple[Call, ...]]:
        return story_pod.map(lambda chosen: tuple(Call(op, {"pod": chosen}) for op in ops))

    write = st.one_of(
        on("add_node", "node", node),
        pair("update_node", focus_node_pairs, ghost_node_pairs, node_pairs),
        on("remove_node", "node", node),
        on("assume_pod", "pod", any_pod),
        on("forget_pod", "pod", any_pod),
        on("add_pod", "pod", any_pod),
        pair("update_pod", focus_pod_pairs, pod_pairs),
        on("remove_pod", "pod", any_pod),
        *([on("finish_binding", "pod", any_pod)] if release.has_expiry else []),
        *([on("remove_assumed_pod", "pod", any_pod)] if release.has_remove_assumed_pod else []),
    )
    read = st.one_of(
        on("get_pod", "pod", pod),
        on("is_assumed_pod", "pod", pod),
        st.just(Call("node_count", {})),
        st.just(Call("pod_count", {})),
        st.just(Call("dump", {})),
        st.just(Call("update_snapshot", {"snapshot": snapshot})),
        st.just(Call("view_snapshot", {"snapshot": snapshot})),
        *([on("get_node", "name", names)] if release.has_get_node else []),
    )
    stories = (
        [("assume_pod", "finish_binding"), ("assume_pod", "finish_binding", "add_pod")]
        if release.has_expiry
        else [("assume_pod", "add_pod")]
    ) + [("assume_pod", "forget_pod")]
    # reads are half the steps, so that every write has readers to overlap
    return st.one_of(
        write.map(lambda call: (call,)),
        read.map(lambda call: (call,)),
        read.map(lambda call: (call,)),
        st.one_of(*(story(*ops) for ops in stories)),
    )


def _calls(
    pools: _Pools, snapshot: str, release: Release, *, min_steps: int, max_steps: int
) -> st.SearchStrategy[tuple[Call, ...]]:
    """A thread's calls: a few steps, one after the other."""
    return st.lists(_steps(pools, snapshot, release), min_size=min_steps, max_size=max_steps).map(
        lambda steps: tuple(call for step in steps for call in step)
    )


@st.composite
def programs(
    draw: st.DrawFn,
    *,
    threads: int | None = None,
    release: Release = DEFAULT_RELEASE,
    aim: tuple[str, str] | None = None,
) -> Program:
    """Parallel programs over small shared pools, around one node and one pod; `threads` None
    draws 2 to 4 threads; `aim`, a (write, shape) row of the overlap table, draws only
    programs aimed at it."""
    focus_node = draw(st.sampled_from(SHARED_NODE_NAMES[:2]))
    pods = {
        uid: tuple(strategies.as_read_by(release, pod) for pod in versions)
        for uid, versions in draw(_pod_pool(focus_node)).items()
    }
    elsewhere = next(name for name in SHARED_NODE_NAMES[:2] if name != focus_node)
    pools = _Pools(
        nodes={name: draw(_node_versions(name)) for name in SHARED_NODE_NAMES},
        pods=pods,
        focus_node=focus_node,
        focus_pod=FOCUS_POD,
        moved=(strategies.with_changes(pods[FOCUS_POD][0], node_name=elsewhere),),
    )
    # more threads overlap more pairs of calls: four as often as two and three together
    count = threads if threads is not None else draw(st.sampled_from((*THREAD_COUNTS, 4)))
    if aim is not None or draw(st.integers(0, 3)):  # three in four aim at one row of the table
        return draw(_aimed(pools, elsewhere, release, count, row=aim))
    return Program(
        ttl=draw(st.sampled_from(EXPIRING_TTLS)) if release.has_expiry else Decimal(0),
        prefix=(
            Call("add_node", {"node": pools.nodes[focus_node][0]}),
            # half the programs leave the other node out, for writes that meet a new name
            *(
                [Call("add_node", {"node": pools.nodes[elsewhere][0]})]
                if draw(st.booleans())
                else []
            ),
            Call("add_pod", {"pod": pods[GHOST_POD][0]}),
            *draw(_calls(pools, "main", release, min_steps=0, max_steps=MAX_PREFIX_STEPS)),
        ),
        threads=tuple(
            draw(
                _calls(
                    pools,
                    thread_name(index),
                    release,
                    min_steps=MIN_THREAD_STEPS,
                    max_steps=MAX_THREAD_STEPS,
                )
            )
            for index in range(count)
        ),
    )


@st.composite
def _aimed(
    draw: st.DrawFn,
    pools: _Pools,
    elsewhere: str,
    release: Release,
    count: int,
    *,
    row: tuple[str, str] | None,
) -> Program:
    """A program aimed at one row of the overlap table (`kcache.concurrency.coverage`), `row`
    or a drawn one: its prefix gives the write its shape, the first thread makes the write
    (marked `held`) among a few reads, and every other thread makes every read the release
    has (the counts twice), in a drawn order.

    Random programs reach a shape like "a pod write naming a key held on another node" only
    when their calls happen to line up; aimed ones set it up and surround the write with reads.
    """
    op, shape = row if row is not None else draw(st.sampled_from(coverage.writes(release)))
    focus = pools.pods[pools.focus_pod]
    home, moved, ghost = focus[0], pools.moved[0], pools.pods[GHOST_POD][0]
    node_versions = pools.nodes[pools.focus_node]
    prefix = [Call("add_node", {"node": node_versions[0]}), Call("add_pod", {"pod": ghost})]
    if not (op in coverage.NODE_WRITES and shape == "new node"):
        prefix.append(Call("add_node", {"node": pools.nodes[elsewhere][0]}))
    ttl = Decimal(0)
    write: tuple[Call, ...] = ()
    if op in coverage.NODE_WRITES:
        name = {"held node": pools.focus_node, "ghost node": GHOST_NODE}.get(shape, elsewhere)
        versions = pools.nodes[name]
        write = (
            Call(op, {"old": versions[0], "new": versions[-1]}, held=True)
            if op == "update_node"
            else Call(op, {"node": versions[-1]}, held=True),
        )
    elif op in coverage.POD_WRITES:
        if shape == "same node":
            prefix.append(Call("assume_pod", {"pod": home}))
        elif shape == "other node":
            prefix.append(Call("assume_pod", {"pod": moved}))
        pod = ghost if shape == "ghost node" else home
        write = (
            Call(op, {"old": pod, "new": focus[-1] if pod is home else pod}, held=True)
            if op == "update_pod"
            else Call(op, {"pod": pod}, held=True),
        )
    second = pools.pods[strategies.UIDS[1]][0]
    binding_too: tuple[Call, ...] = ()
    if shape == coverage.EXPIRY_SHAPES[0]:
        # the loop's first pass expires two pods at once, while the informer confirms one of
        # them: a pass racing a confirmation
        ttl = EXPIRING_TTLS[0]
        prefix += [
            Call(step, {"pod": pod})
            for pod in (home, second)
            for step in ("assume_pod", "finish_binding")
        ]
        write = (Call("add_pod", {"pod": home}),)
    if op == "finish_binding":
        # as the scheduler's binding goroutines do, another thread finishes binding another
        # assumed pod at the same step, and the loop expires both
        ttl = EXPIRING_TTLS[0]
        prefix.append(Call("assume_pod", {"pod": second}))
        binding_too = (Call("finish_binding", {"pod": second}),)

    def reads(snapshot: str) -> st.SearchStrategy[list[Call]]:
        every = [
            Call("update_snapshot", {"snapshot": snapshot}),
            Call("dump", {}),
            Call("get_pod", {"pod": home}),
            Call("is_assumed_pod", {"pod": home}),
            Call("node_count", {}),
            Call("pod_count", {}),
            *([Call("get_node", {"name": pools.focus_node})] if release.has_get_node else []),
            # the counts take microseconds, so a write rarely overlaps one: twice each
            Call("node_count", {}),
            Call("pod_count", {}),
        ]
        return st.permutations(every)

    first = draw(reads(thread_name(0)))
    at = draw(st.integers(0, len(first)))

    def among(calls: list[Call], extra: tuple[Call, ...]) -> tuple[Call, ...]:
        return (*calls[:at], *extra, *calls[at:])

    return Program(
        ttl=ttl,
        prefix=tuple(prefix),
        held_pass=op == "cleanup",
        threads=(
            among(first, write),
            *(
                among(draw(reads(thread_name(index))), binding_too if index == 1 else ())
                for index in range(1, count)
            ),
        ),
    )


def thread_name(index: int) -> str:
    """`t1`, `t2`, ...: a worker's name in histories, and the name of its snapshot."""
    return f"t{index + 1}"
