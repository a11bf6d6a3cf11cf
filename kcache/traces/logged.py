"""What an in-process cache logs while kcache runs it, kept to be shown where it belongs.

The spec and impl log where upstream's code logs (klog's "Node exists in
nodeTree but not in NodeInfoMap, this should not happen" and the like), with
Python's logging under `kcache.spec` and `kcache.impl`.  Left to logging's
last-resort handler, those lines land on stderr between a command's result
lines, unexplained; `LogLines` takes every record while it is entered, for
the command to print under the trace they belong to.
"""

from __future__ import annotations

import logging

import attrs

#: the loggers of the caches that log where upstream's code logs (impl in its words)
UPSTREAM_MIRRORS = ("kcache.spec", "kcache.impl")


@attrs.frozen
class LogLine:
    logger: str
    #: `level: message`
    text: str

    @property
    def as_upstream(self) -> bool:
        """Whether the spec or impl logged it: each logs where upstream's code logs."""
        return any(
            self.logger == name or self.logger.startswith(name + ".") for name in UPSTREAM_MIRRORS
        )


class LogLines(logging.Handler):
    """Takes what is logged at INFO and above while entered, until `take` hands it over."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self._lines: list[LogLine] = []

    def emit(self, record: logging.LogRecord) -> None:
        self._lines.append(
            LogLine(record.name, f"{record.levelname.lower()}: {record.getMessage()}")
        )

    def take(self) -> list[LogLine]:
        """The lines logged since the last take."""
        lines, self._lines = self._lines, []
        return lines

    def __enter__(self) -> LogLines:
        logging.getLogger().addHandler(self)
        return self

    def __exit__(self, *exc_info: object) -> None:
        logging.getLogger().removeHandler(self)
