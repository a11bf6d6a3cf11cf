"""Cluster-wide image presence (§5): one shared summary per image name.

Each live NodeInfo maps its image names to the *shared* summaries, so adding
or removing another node changes what every holder of that image would
report, without bumping anyone's generation.  A clone freezes the count at
clone time; that is why an unchanged snapshot entry can show a stale count.
"""

from __future__ import annotations

from typing import NamedTuple, Protocol

from kcache.spec.objects import Node


class ImageState(Protocol):
    """What a NodeInfo's image map holds: a live summary, or a clone's frozen copy."""

    @property
    def size(self) -> int: ...

    @property
    def num_nodes(self) -> int: ...

    @property
    def frozen(self) -> ImageStateSnapshot: ...


class ImageStateSnapshot(NamedTuple):
    """An image as a NodeInfo clone holds it: the size and the node count when cloned."""

    size: int
    num_nodes: int

    @property
    def frozen(self) -> ImageStateSnapshot:
        """Already frozen: a clone of a clone shares it."""
        return self


class ImageStateSummary:
    """One image: the first reporter's size and the names of the nodes that have it.

    `frozen` is the copy a NodeInfo clone takes, made again only when the node set
    changes (a node event), so that the clones of a refresh share it instead of
    each building its own.
    """

    __slots__ = ("frozen", "nodes", "size")

    def __init__(self, size: int, first_node: str) -> None:
        self.size = size
        self.nodes = {first_node}
        self.frozen = ImageStateSnapshot(size, 1)

    @property
    def num_nodes(self) -> int:
        """How many nodes have the image right now."""
        return len(self.nodes)

    def refreeze(self) -> None:
        """Take a new frozen copy after the node set changed."""
        self.frozen = ImageStateSnapshot(self.size, len(self.nodes))


class ImageStates:
    """Image name -> live summary, for every image some current node reports."""

    __slots__ = ("summaries",)

    def __init__(self) -> None:
        self.summaries: dict[str, ImageStateSummary] = {}

    def add_node(self, node: Node) -> dict[str, ImageState]:
        """Register `node` under each image name it reports; return its per-node map.

        An image already known keeps its size: the first reporter wins for as
        long as any node has the image.
        """
        per_node: dict[str, ImageState] = {}
        summaries = self.summaries
        for image in node.images:
            for name in image.names:
                summary = summaries.get(name)
                if summary is None:
                    summary = summaries[name] = ImageStateSummary(image.size_bytes, node.name)
                elif node.name not in summary.nodes:
                    summary.nodes.add(node.name)
                    summary.refreeze()
                per_node.setdefault(name, summary)
        return per_node

    def remove_node(self, node: Node | None) -> None:
        """Withdraw `node` from each image it reports; forget images nobody has left."""
        if node is None:
            return
        summaries = self.summaries
        for name in node.image_names:
            summary = summaries.get(name)
            if summary is not None and node.name in summary.nodes:
                summary.nodes.remove(node.name)
                # A ghost NodeInfo keeps pointing at a summary nobody has any more.
                summary.refreeze()
                if not summary.nodes:
                    del summaries[name]
