"""The `kcache` command: a thin shell over the library.

To do from Python what a subcommand does, call the library instead (for
`replay`: `kcache.traces.replay.replay_paths` or `replay_trace`).  Each subcommand is
a module of `kcache.cli` listed in `SUBCOMMANDS`; the module's docstring
is its help, `add_arguments(parser)` declares its options and `run(args)`
returns the exit status.  Exit statuses: 0 all good, 1 the check found a
problem, 2 kcache could not run (usage, input, target or adapter errors,
reported as one line without a traceback), 130 stopped by Ctrl-C, 141 the
reader of the output went away (`kcache ... | head -1`), as for SIGPIPE.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from kcache.errors import KcacheError

#: subcommand name -> the module that implements it
SUBCOMMANDS: dict[str, str] = {
    "replay": "kcache.cli.replay",
    "explain": "kcache.cli.explain",
    "conform": "kcache.cli.conform",
    "fuzz": "kcache.cli.fuzz",
    "show": "kcache.cli.show",
    "transitions": "kcache.cli.transitions",
}

#: the distribution kcache is installed as (the package index's `kcache` is another project)
DISTRIBUTION = "kcache-conformance"
#: exit status when kcache could not run at all
USAGE_ERROR = 2
#: exit status when the output's reader closed the pipe: 128 + SIGPIPE, as the shell reports
OUTPUT_CLOSED = 141


class _Parser(argparse.ArgumentParser):
    """argparse, with a usage error as one line: the usage itself is one `--help` away."""

    def error(self, message: str) -> NoReturn:
        self.exit(USAGE_ERROR, f"{self.prog}: error: {message}\n")


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """argparse's help layout, the same on every supported Python.

    Up to 3.12 argparse measured subcommand names at their parent's indent,
    from 3.13 at their own, which moves the help column of `kcache --help`;
    this formatter measures them as 3.13 does on every version, so the help
    (and docs/cli.md, made from it) does not depend on who runs it.
    """

    def add_argument(self, action: argparse.Action) -> None:
        if action.help is argparse.SUPPRESS:
            return
        invocation = self._format_action_invocation
        lengths = [len(invocation(action)) + self._current_indent]
        # the generator indents while it yields: each subaction is measured at its own indent
        lengths += [
            len(invocation(sub)) + self._current_indent
            for sub in self._iter_indented_subactions(action)
        ]
        self._action_max_length = max(self._action_max_length, *lengths)
        self._add_item(self._format_action, [action])


def build_parser() -> argparse.ArgumentParser:
    """The parser of every subcommand in `SUBCOMMANDS` (subparsers share its class)."""
    parser = _Parser(
        prog="kcache",
        description="Conformance checks for kube-scheduler cache implementations.",
        epilog="Exit status: 0 all good, 1 a check failed, 2 kcache could not run.",
        formatter_class=HelpFormatter,
    )
    parser.add_argument(
        "--version", action="version", version=f"kcache {version()}", help="print the version"
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, module_name in SUBCOMMANDS.items():
        module = importlib.import_module(module_name)
        doc = (module.__doc__ or "").strip()
        command = commands.add_parser(
            name,
            help=doc.splitlines()[0] if doc else None,
            description=doc,
            formatter_class=HelpFormatter,
        )
        module.add_arguments(command)
        command.set_defaults(run=module.run)
    return parser


def version() -> str:
    """The installed version of kcache-conformance, or "unknown" when it is not installed."""
    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return "unknown (not installed)"


def main(argv: Sequence[str] | None = None) -> int:
    """Run `kcache ARGV...` and return its exit status."""
    try:
        status = _run(argv)
        sys.stdout.flush()  # a closed pipe shows here, while it can still be handled
    except BrokenPipeError:
        # The reader went away (`| head -1`): stop quietly, as cat does.  Python
        # would flush stdout again at exit and complain; point it at /dev/null.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return OUTPUT_CLOSED
    return status


def _run(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_request:  # argparse has printed its error line or help
        return exit_request.code if isinstance(exit_request.code, int) else USAGE_ERROR
    try:
        status: int = args.run(args)
    except KcacheError as error:
        print(f"kcache: error: {error}", file=sys.stderr)
        return USAGE_ERROR
    except KeyboardInterrupt:
        print("kcache: interrupted", file=sys.stderr)
        return 130
    return status
