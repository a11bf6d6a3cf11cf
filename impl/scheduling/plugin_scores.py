"""The scores a cycle gave its feasible nodes, as `Decision.plugin_scores` shows them.

The cycle keeps what upstream's `prioritizeNodes` keeps: one row of weighted
scores per node, in the plugins' order.  The report's map of a map (node ->
plugin -> score) is made the first time someone reads it: upstream's cycle
never makes one, and the Go adapter builds its own after the cycle's CPU is
taken, so a cycle that made it on every call was timed for more than
upstream's is.  Building it was a fifteenth of impl's cycle at 5,000 nodes.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence


class PluginScores(Mapping[str, Mapping[str, int]]):
    """Node -> plugin -> weighted score, over the cycle's rows, made into maps when read."""

    __slots__ = ("_by_node", "_names", "_plugins", "_rows")

    def __init__(
        self, names: Sequence[str], plugins: Sequence[str], rows: Sequence[Sequence[int]]
    ) -> None:
        self._names = names
        self._plugins = plugins
        self._rows = rows
        self._by_node: dict[str, dict[str, int]] | None = None

    def _maps(self) -> dict[str, dict[str, int]]:
        if self._by_node is None:
            by_plugin = map(dict, map(zip, itertools.repeat(self._plugins), self._rows))
            self._by_node = dict(zip(self._names, by_plugin, strict=True))
        return self._by_node

    def __getitem__(self, node: str) -> Mapping[str, int]:
        return self._maps()[node]

    def __iter__(self) -> Iterator[str]:
        return iter(self._maps())

    def __len__(self) -> int:
        return len(self._names)

    def __repr__(self) -> str:
        return repr(self._maps())
