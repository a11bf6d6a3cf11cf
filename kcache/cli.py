"""The `kcache` command: a thin shell over the library.

To do from Python what a subcommand does, call the library instead (for
`replay`: `kcache.replay.replay_paths` or `replay_trace`).  Each subcommand is
a module of `kcache.commands` listed in `SUBCOMMANDS`; the module's docstring
is its help, `add_arguments(parser)` declares its options and `run(args)`
returns the exit status.  Exit statuses: 0 all good, 1 the check found a
problem, 2 kcache could not run (usage, input, target or adapter errors,
reported as one line without a traceback).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from kcache.errors import KcacheError

#: subcommand name -> the module that implements it
SUBCOMMANDS: dict[str, str] = {
    "replay": "kcache.commands.replay",
    "explain": "kcache.commands.explain",
    "conform": "kcache.commands.conform",
    "fuzz": "kcache.commands.fuzz",
    "transitions": "kcache.commands.transitions",
}

#: exit status when kcache could not run at all
USAGE_ERROR = 2


def build_parser() -> argparse.ArgumentParser:
    """The parser of every subcommand in `SUBCOMMANDS`."""
    parser = argparse.ArgumentParser(
        prog="kcache",
        description="Conformance checks for kube-scheduler cache implementations.",
        epilog="Exit status: 0 all good, 1 a check failed, 2 kcache could not run.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, module_name in SUBCOMMANDS.items():
        module = importlib.import_module(module_name)
        doc = (module.__doc__ or "").strip()
        command = commands.add_parser(
            name,
            help=doc.splitlines()[0] if doc else None,
            description=doc,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        module.add_arguments(command)
        command.set_defaults(run=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run `kcache ARGV...` and return its exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_request:  # argparse has printed usage or help
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
