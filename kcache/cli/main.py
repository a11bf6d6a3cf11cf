"""The `kcache` command: a thin shell over the library.

To do from Python what a subcommand does, call the library instead (for
`replay`: `kcache.traces.replay.replay_paths` or `replay_trace`).  Each subcommand is
a module of `kcache.cli` listed in `SUBCOMMANDS`; the module's docstring
is its help, `add_arguments(parser)` declares its options and `run(args)`
returns the exit status.  Exit statuses: 0 all good, 1 the check found a
problem, 2 kcache could not run (usage, input, target or adapter errors,
reported as one line without a traceback; so is an unexpected exception, a
bug in kcache, with how to report it; `kcache` alone prints the commands and
exits 2), 130 stopped by Ctrl-C, 143 by
SIGTERM (adapters are stopped either way), 141 the
reader of the output went away (`kcache ... | head -1`), as for SIGPIPE.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import importlib.metadata
import os
import shlex
import signal
import sys
import threading
import traceback
from collections.abc import Sequence
from typing import NoReturn

from kcache import collector
from kcache.errors import KcacheError

#: subcommand name -> the module that implements it
SUBCOMMANDS: dict[str, str] = {
    "replay": "kcache.cli.replay",
    "explain": "kcache.cli.explain",
    "export": "kcache.cli.export",
    "conform": "kcache.cli.conform",
    "fuzz": "kcache.cli.fuzz",
    "show": "kcache.cli.show",
    "schedule": "kcache.cli.schedule",
    "simulate": "kcache.cli.simulate",
    "transitions": "kcache.cli.transitions",
    "report": "kcache.cli.findings",
    "completion": "kcache.cli.completion",
}

#: the distribution kcache is installed as (the package index's `kcache` is another project)
DISTRIBUTION = "kcache-conformance"
#: exit status when kcache could not run at all
USAGE_ERROR = 2
#: exit status when the output's reader closed the pipe: 128 + SIGPIPE, as the shell reports
OUTPUT_CLOSED = 141
#: exit status when SIGTERM stopped kcache: 128 + SIGTERM
STOPPED_BY_SIGTERM = 143
#: errors of writing the output itself: a full disk or quota, a file too big, a failing device
_OUTPUT_LOST = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO})


class _Parser(argparse.ArgumentParser):
    """argparse, with a usage error as one line: the usage itself is one `--help` away."""

    def error(self, message: str) -> NoReturn:
        self.exit(USAGE_ERROR, f"{self.prog}: error: {message}\n")


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """argparse's help layout, the same on every supported Python.

    Up to 3.12 argparse measured subcommand names at their parent's indent,
    from 3.13 at their own, which moves the help column of `kcache --help`;
    this formatter measures them as 3.13 does on every version, so the help
    (and docs/cli.md, made from it) does not depend on who runs it.  So it
    names an option's value as 3.13 does too: once, after its last spelling
    (`-L, --label-columns KEY`, where 3.12 wrote `-L KEY, --label-columns KEY`).
    """

    def _format_action_invocation(self, action: argparse.Action) -> str:
        if not action.option_strings or action.nargs == 0:
            return super()._format_action_invocation(action)
        value = self._format_args(action, self._get_default_metavar_for_optional(action))
        return f"{', '.join(action.option_strings)} {value}"

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
        epilog="Exit status: 0 all good, 1 a check failed, 2 kcache could not run.\n"
        "`kcache` alone prints this help and exits 2: a command is needed.",
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


def command() -> int:
    """The `kcache` command (the script and `python -m kcache`): `main` over `sys.argv`, in
    a process that ends after it, so it collects its garbage as a run does and leaves what
    it holds out of the interpreter's last collection (`kcache.collector`)."""
    collector.command_started()
    try:
        return main()
    finally:
        collector.command_ending()


def main(argv: Sequence[str] | None = None) -> int:
    """Run `kcache ARGV...` and return its exit status."""
    _closed_streams_to_devnull()
    try:
        status = _run(argv)
        sys.stdout.flush()  # a closed pipe shows here, while it can still be handled
    except BrokenPipeError:
        # The reader went away (`| head -1`): stop quietly, as cat does.  Python
        # would flush stdout again at exit and complain; point it at /dev/null.
        _stdout_to_devnull()
        return OUTPUT_CLOSED
    except OSError as error:
        if error.errno not in _OUTPUT_LOST:
            raise
        # the output is on a full disk, or a device that failed: kcache's own files
        # (traces, reports) handle these where they are written
        _stdout_to_devnull()
        print(f"kcache: error: cannot write the output: {error.strerror or error}", file=sys.stderr)
        return USAGE_ERROR
    return status


def _closed_streams_to_devnull() -> None:
    """Give a stdout or stderr closed at start (`kcache ... >&-`) to /dev/null.

    Python leaves such a stream None, and the descriptor free: the next file
    opened (a trace being written) or an adapter's pipe would take its number,
    and output meant for the terminal would land there.  The exit status still
    says how the run went.
    """
    for number, name in ((1, "stdout"), (2, "stderr")):
        if getattr(sys, name) is not None:
            continue
        devnull = os.open(os.devnull, os.O_WRONLY)
        if devnull != number:
            os.dup2(devnull, number)
            os.close(devnull)
        setattr(sys, name, open(number, "w", closefd=False))  # noqa: SIM115 -- lives as sys's


def _stdout_to_devnull() -> None:
    """Send what is left of stdout nowhere: Python flushes it again at exit."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


class _Terminated(KeyboardInterrupt):
    """SIGTERM outside a run that handles it: unwound like Ctrl-C, so adapters are stopped."""


def _terminate(signum: int, frame: object) -> None:
    raise _Terminated


def _run(argv: Sequence[str] | None) -> int:
    if threading.current_thread() is not threading.main_thread():
        return _parsed_and_run(argv)
    # SIGTERM's default action would end kcache on the spot, leaving an adapter running
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        return _parsed_and_run(argv)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _parsed_and_run(argv: Sequence[str] | None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments == ["--version"]:
        # answered before the parser is built: that imports every command, Hypothesis among them
        print(f"kcache {version()}")
        return 0
    if _working_directory_gone():
        print(f"kcache: error: {_NO_WORKING_DIRECTORY}", file=sys.stderr)
        return USAGE_ERROR
    parser = build_parser()
    if not arguments:  # what kcache can do, rather than "a command is required"
        parser.print_help()
        return USAGE_ERROR
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_request:  # argparse has printed its error line or help
        return exit_request.code if isinstance(exit_request.code, int) else USAGE_ERROR
    try:
        status: int = args.run(args)
    except KcacheError as error:
        why = f"; {_NO_WORKING_DIRECTORY}" if _working_directory_gone() else ""
        print(f"kcache: error: {error}{why}", file=sys.stderr)
        return USAGE_ERROR
    except _Terminated:
        print("kcache: stopped by SIGTERM", file=sys.stderr)
        return STOPPED_BY_SIGTERM
    except KeyboardInterrupt:
        print("kcache: interrupted", file=sys.stderr)
        return 130
    except Exception as error:
        if isinstance(error, BrokenPipeError) or (
            isinstance(error, OSError) and error.errno in _OUTPUT_LOST
        ):
            raise  # the output itself is lost: `main` ends quietly
        print(f"kcache: error: {_unexpected(argv, error)}", file=sys.stderr)
        return USAGE_ERROR
    return status


_NO_WORKING_DIRECTORY = (
    "the working directory was removed (relative paths and ./.hypothesis are there): "
    "run kcache from a folder that exists"
)


def _working_directory_gone() -> bool:
    try:
        os.getcwd()
    except FileNotFoundError:
        return True
    return False


#: set (to anything) to print the traceback of an unexpected exception too
TRACEBACK_VARIABLE = "KCACHE_TRACEBACK"


def _unexpected(argv: Sequence[str] | None, error: Exception) -> str:
    """The one line for an exception kcache did not expect: the command line, the exception,
    and how to report it; or the working directory's removal, which a user can fix."""
    command = shlex.join(["kcache", *(sys.argv[1:] if argv is None else argv)])
    command = command if len(command) <= 200 else command[:197] + "..."
    if _working_directory_gone():
        return f"{command}: {_NO_WORKING_DIRECTORY}"
    if os.environ.get(TRACEBACK_VARIABLE):
        traceback.print_exception(error, file=sys.stderr)
    reason = " ".join(str(error).split())[:300]
    return (
        f"{command}: unexpected {type(error).__name__}"
        + (f": {reason}" if reason else "")
        + f"; please report it to the kcache developers with this command and its input "
        f"({TRACEBACK_VARIABLE}=1 prints the traceback)"
    )
