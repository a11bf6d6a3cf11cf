"""Which writes overlapped which reads in a parallel run's checked histories, by argument shape.

A parallel run that never lets `update_node` overlap `dump`, or never removes
a pod from a ghost while a snapshot updates, says nothing about those races
however long it runs.  For every linearizable history, the witness order
the check found is replayed on the spec, which tells each write's *shape*:
what the cache held, in that order, just before the write took effect.
Every pair of a write and a read made by different threads whose intervals
overlap is then counted in the cell (write, shape, read).  `kcache conform
--parallel` prints one line with the cells reached and, with --coverage,
the table; the suite requires the ci profile to reach every cell.

Shapes of a pod write (its pod; `update_pod`: the old pod's key and the new
pod's node), the first that applies:

- ghost node: the cache has no node object under the pod's node name (a
  ghost, or nothing yet);
- new UID: the cache holds no pod under the key;
- other node: the cache holds the key on another node than the pod names;
- same node: the cache holds the key on the node the pod names.

A node write's: held node (the name has a node object), ghost node (only
pods under the name), new node (nothing under it).  An expiry pass's: expired
a pod, or expired none.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

from kcache.concurrency.history import Event, History
from kcache.concurrency.linearizability import initial_model
from kcache.ops import perform
from kcache.spec.cache import Cache as SpecCache
from kcache.spec.releases import Release
from kcache.spec.views import Dump

#: the reads a cell pairs a write with: the snapshot update, the dump, get_pod, and the
#: listers (is_assumed_pod, the counts, get_node where the release has it)
READS = (
    "update_snapshot",
    "dump",
    "get_pod",
    "is_assumed_pod",
    "node_count",
    "pod_count",
    "get_node",
)
NODE_WRITES = ("add_node", "update_node", "remove_node")
NODE_SHAPES = ("held node", "ghost node", "new node")
POD_WRITES = (
    "assume_pod",
    "finish_binding",
    "forget_pod",
    "remove_assumed_pod",
    "add_pod",
    "update_pod",
    "remove_pod",
)
POD_SHAPES = ("same node", "other node", "new UID", "ghost node")
EXPIRY_SHAPES = ("expired a pod", "expired none")

#: one cell: (write op, its shape, read op)
Cell = tuple[str, str, str]


def reads(release: Release) -> tuple[str, ...]:
    """The reads parallel programs make under `release`."""
    return tuple(read for read in READS if read != "get_node" or release.has_get_node)


def writes(release: Release) -> list[tuple[str, str]]:
    """Every (write op, shape) a run under `release` can reach, in table order."""
    rows = [(op, shape) for op in NODE_WRITES for shape in NODE_SHAPES]
    for op in POD_WRITES:
        if op == "finish_binding" and not release.has_expiry:
            continue
        if op == "remove_assumed_pod" and not release.has_remove_assumed_pod:
            continue
        rows += [(op, shape) for shape in POD_SHAPES]
    if release.has_expiry:
        rows += [("cleanup", shape) for shape in EXPIRY_SHAPES]
    return rows


def cells(release: Release) -> list[Cell]:
    """Every cell of `release`'s table."""
    return [(op, shape, read) for op, shape in writes(release) for read in reads(release)]


def shapes(history: History, order: Iterable[int]) -> dict[int, str]:
    """Each write's shape (by event id), replaying the spec along `order`, a witness of `check`."""
    model = initial_model(history, SpecCache)
    by_id = {event.id: event for event in history.events}
    found: dict[int, str] = {}
    for event_id in order:
        event = by_id[event_id]
        if event.op in NODE_WRITES or event.op in POD_WRITES:
            found[event_id] = _shape(event, model.cache.dump())
        before = model.cache.dump().assumed_pods if event.op == "cleanup" else None
        perform(model, event.op, event.args)
        if before is not None:
            expired = before - model.cache.dump().assumed_pods
            found[event_id] = EXPIRY_SHAPES[0] if expired else EXPIRY_SHAPES[1]
    return found


def _shape(event: Event, held: Dump) -> str:
    if event.op in NODE_WRITES:
        name = event.args["new" if event.op == "update_node" else "node"].name
        view = held.nodes.get(name)
        return "new node" if view is None else "held node" if view.has_node else "ghost node"
    key = event.args["old" if event.op == "update_pod" else "pod"].uid
    node_name = event.args["new" if event.op == "update_pod" else "pod"].node_name
    view = held.nodes.get(node_name)
    if view is None or not view.has_node:
        return "ghost node"
    holders = [name for name, node in held.nodes.items() if key in node.pods]
    if not holders:
        return "new UID"
    return "same node" if node_name in holders else "other node"


def overlaps(history: History, order: Iterable[int]) -> Counter[Cell]:
    """Every (write, shape, read) pair of different threads whose calls overlapped in time."""
    shape_of = shapes(history, order)
    counts: Counter[Cell] = Counter()
    observed = [event for event in history.events if event.op in READS]
    for write in history.events:
        shape = shape_of.get(write.id)
        if shape is None:
            continue
        for read in observed:
            if (
                read.thread != write.thread
                and read.t_invoke < write.t_return
                and write.t_invoke < read.t_return
            ):
                counts[(write.op, shape, read.op)] += 1
    return counts


def unreached(release: Release, hits: Mapping[Cell, int]) -> list[Cell]:
    """The cells of `release` no checked history reached."""
    return [cell for cell in cells(release) if not hits.get(cell)]


def summary(release: Release, hits: Mapping[Cell, int], *, named: int = 3) -> str:
    """One line: cells reached, and the first few that were not."""
    missing = unreached(release, hits)
    total = len(cells(release))
    line = f"overlaps: {total - len(missing)} of {total} write x read cells reached"
    if missing:
        names = "; ".join(f"{op} ({shape}) x {read}" for op, shape, read in missing[:named])
        more = f" and {len(missing) - named} more" if len(missing) > named else ""
        line += f"; not reached: {names}{more} (--coverage shows the table)"
    return line


def table(release: Release, hits: Mapping[Cell, int]) -> str:
    """The table: a row per write and shape, a column per read, overlap counts; `-` unreached."""
    columns = reads(release)
    rows = writes(release)
    label = max(len(f"{op} ({shape})") for op, shape in rows)
    widths = [max(len(read), 6) for read in columns]
    lines = [
        f"overlaps ({release.name}): how often each write, by shape, overlapped each read",
        "  "
        + " " * label
        + "".join(f"  {read:>{w}}" for read, w in zip(columns, widths, strict=True)),
    ]
    for op, shape in rows:
        counts = [hits.get((op, shape, read), 0) for read in columns]
        lines.append(
            f"  {f'{op} ({shape})':<{label}}"
            + "".join(
                f"  {count if count else '-':>{w}}" for count, w in zip(counts, widths, strict=True)
            )
        )
    return "\n".join(lines)
