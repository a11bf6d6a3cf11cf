"""Problems outside any cache under test: the harness cannot run, it did not find a bug.

The CLI prints a `KcacheError` as one line (plus any detail lines the error
carries, such as an adapter's last stderr lines) and exits 2, so a bad path, a
bad target or a broken adapter is never mistaken for a failed conformance run.
"""

from __future__ import annotations


class KcacheError(Exception):
    """Input or environment the user must fix; the message names what and where."""


class TraceError(KcacheError, ValueError):
    """A trace file or trace document does not follow docs/trace-format.md."""


class TargetError(KcacheError, ValueError):
    """An `--impl` target names nothing kcache can build a cache from."""


class AdapterError(KcacheError):
    """An adapter process crashed, hung, or broke the protocol."""
