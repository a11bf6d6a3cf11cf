"""The options `kcache conform`, `kcache fuzz` and the parallel mode share, and their parsing.

Each parser turns one option's text into a value or an `ArgumentTypeError`
that argparse prints as one usage line (exit 2).
"""

from __future__ import annotations

import argparse
import random
import re
from decimal import Decimal, InvalidOperation
from pathlib import Path

from kcache import files, targets
from kcache.errors import KcacheError
from kcache.machine.database import DB_HELP, NO_DATABASE, REDIS_SCHEMES
from kcache.machine.profiles import PROFILES
from kcache.ops import read_seconds
from kcache.spec.releases import DEFAULT_RELEASE, RELEASES, Release
from kcache.targets.time_limit import STEP_TIMEOUT

#: duration units accepted by --time-budget and --duration, in seconds
DURATION_UNITS: dict[str, int] = {"s": 1, "m": 60, "h": 3600}
_DURATION = re.compile(r"(\d+(?:\.\d+)?)([smh])")
DURATION_HELP = "seconds, or a number with s, m or h (90, 30s, 5m, 1h30m)"

#: where failing traces go unless --out says otherwise
DEFAULT_OUT = Path("kcache-failures")


def duration(text: str) -> float:
    """`--time-budget` / `--duration`: `90`, `30s`, `5m`, `1.5h`, `1h30m` as seconds (> 0)."""
    try:
        seconds = float(Decimal(text))
    except InvalidOperation:
        parts = _DURATION.findall(text)
        if not parts or "".join(number + unit for number, unit in parts) != text:
            raise argparse.ArgumentTypeError(
                f"invalid duration {text!r}: use {DURATION_HELP}"
            ) from None
        seconds = sum(float(number) * DURATION_UNITS[unit] for number, unit in parts)
    if not seconds > 0:
        raise argparse.ArgumentTypeError(f"invalid duration {text!r}: must be more than 0 seconds")
    return seconds


def ttl_seconds(text: str) -> Decimal:
    """`--ttl`: a TTL in exact decimal seconds, 0 (never expire) or more."""
    try:
        seconds = read_seconds(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"invalid TTL {text!r}: {error}") from None
    if seconds < 0:
        raise argparse.ArgumentTypeError(f"invalid TTL {text!r}: must be 0 or more seconds")
    return seconds


def positive_int(text: str) -> int:
    """A count of at least 1 (`--max-examples`)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def add_target_arguments(parser: argparse.ArgumentParser) -> None:
    """--impl, --release, --seed and --out: what to check and where failures go."""
    parser.add_argument(
        "--impl",
        required=True,
        metavar="TARGET",
        help=f"the implementation to check against the spec: {targets.TARGET_HELP}",
    )
    add_release_argument(parser, "the upstream release the spec models")
    parser.add_argument(
        "--feature-gate",
        type=feature_gate,
        action="append",
        default=[],
        metavar="NAME=true|false",
        help="fix a feature gate the model reads, for both sides (repeatable), e.g. "
        "InterPodAffinityHostnameFastPath=true with --release v1.37; gates not fixed are "
        "drawn on or off per example, and a failing trace records them",
    )
    parser.add_argument(
        "--acknowledge-upstream-defects",
        action="store_true",
        help="hold the target to the spec with the release's known upstream defects modelled, "
        "so what they explain agrees and nothing else is forgiven; the steps each model "
        "decided are counted and reported (for --impl go...; docs/upstream-divergences.md)",
    )
    parser.add_argument(
        "--seed",
        type=int,
        metavar="N",
        help="seed the example generator, to repeat a run (default: a fresh seed, printed)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=DEFAULT_OUT,
        metavar="DIR",
        help=f"folder for failing traces (default: ./{DEFAULT_OUT}/)",
    )


def add_release_argument(parser: argparse.ArgumentParser, what: str) -> None:
    """`--release`, one of the modelled releases; `what` says what it picks."""
    parser.add_argument(
        "--release",
        choices=sorted(RELEASES),
        default=DEFAULT_RELEASE.name,
        help=f"{what} (default: {DEFAULT_RELEASE.name})",
    )


#: what each `--format` is for, in its help
_FORMAT_USES = {
    "text": "text for people",
    "json": "json for scripts",
    "html": "html for a page to open in a browser (self-contained: nothing is fetched)",
}


def add_format_argument(
    parser: argparse.ArgumentParser, formats: tuple[str, ...] = ("text", "json")
) -> None:
    """`--format text|json` (or the `formats` given), for the commands whose output scripts
    read too, or that draw a page."""
    uses = ", ".join(_FORMAT_USES[name] for name in formats)
    parser.add_argument(
        "--format",
        choices=formats,
        default="text",
        help=f"{uses} (default: text)",
    )


def feature_gate(text: str) -> tuple[str, bool]:
    """`--feature-gate NAME=true|false`."""
    name, equals, value = text.partition("=")
    if not name or not equals or value.lower() not in ("true", "false"):
        raise argparse.ArgumentTypeError(f"expected NAME=true or NAME=false, got {text!r}")
    return name, value.lower() == "true"


def release(args: argparse.Namespace) -> Release:
    """The release `--release` names, with the gates `--feature-gate` sets."""
    try:
        return RELEASES[args.release].with_gates(dict(args.feature_gate))
    except ValueError as error:
        raise KcacheError(f"--feature-gate: {error}") from None


def run_seed(seed: int | None, profile: str) -> int | None:
    """The seed a run uses: the one asked for, else a fresh one to print with the summary.

    A run without a printed seed cannot be repeated, and Hypothesis would
    print its own `@seed(...)` advice instead, even when a run is only
    stopped with Ctrl-C.  A derandomized profile (`ci`) keeps no seed: its
    examples are fixed already, and a seed would undo that.
    """
    if seed is not None or PROFILES[profile].derandomize:
        return seed
    return random.SystemRandom().randrange(2**32)


def add_database_argument(parser: argparse.ArgumentParser, *, default: str) -> None:
    """--db URL (repeatable): the example database, its failures replayed first."""
    parser.add_argument(
        "--db",
        action="append",
        default=[],
        metavar="URL",
        help=f"Hypothesis' example database: {DB_HELP}; twice or more to use several at once, "
        f"e.g. a folder that keeps a copy of what a shared Redis holds (default: {default})",
    )


#: seconds Hypothesis may spend shrinking a failure unless --shrink-budget says otherwise:
#: over an adapter's pipe a shrink can run for many minutes (docs/robustness.md)
DEFAULT_SHRINK_BUDGET = 120.0
#: the shortest --step-timeout: the watchdog checks a few times per limit, and a limit of
#: microseconds would have it interrupt the run faster than the run can make progress
MIN_STEP_TIMEOUT = 0.001


def add_shrink_budget_argument(parser: argparse.ArgumentParser) -> None:
    """`--shrink-budget`, for the commands that shrink what the conformance machine finds."""
    parser.add_argument(
        "--shrink-budget",
        type=duration,
        default=DEFAULT_SHRINK_BUDGET,
        metavar="DURATION",
        help="shrink a failure for at most this long after it is found, then write the "
        "smallest trace found so far and say the shrink was cut short; --time-budget or "
        f"--duration bound it too (default: {DEFAULT_SHRINK_BUDGET:.0f}s): {DURATION_HELP}",
    )


def step_timeout(text: str) -> float:
    """`--step-timeout`: positive seconds, at least `MIN_STEP_TIMEOUT`."""
    seconds = positive_seconds(text)
    if seconds < MIN_STEP_TIMEOUT:
        raise argparse.ArgumentTypeError(
            f"--step-timeout {text}: must be at least {MIN_STEP_TIMEOUT:g} seconds"
        )
    return seconds


def add_step_timeout_argument(parser: argparse.ArgumentParser) -> None:
    """`--step-timeout`, for the commands that call into a cache: the machine's and replay."""
    parser.add_argument(
        "--step-timeout",
        type=step_timeout,
        default=STEP_TIMEOUT,
        metavar="SECONDS",
        help="a call into the cache (in-process, or a request to an adapter) that takes longer "
        "fails its step, with the trace so far, instead of hanging the run "
        f"(default: {STEP_TIMEOUT:g}; at least {MIN_STEP_TIMEOUT:g})",
    )


def positive_seconds(text: str) -> float:
    """A positive, finite number of seconds, as an option's value."""
    try:
        seconds = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, got {text!r}") from None
    if not 0 < seconds < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text}")
    return seconds


def add_coverage_argument(parser: argparse.ArgumentParser, *, parallel: bool = False) -> None:
    """`--coverage`, for the commands that run the conformance machine (`parallel`: conform's,
    which also runs the parallel mode)."""
    parser.add_argument(
        "--coverage",
        action="store_true",
        help="print how often the run reached each life-cycle cell and snapshot-update path "
        + (
            "(with --parallel: how often each write, by shape, overlapped each read) "
            if parallel
            else ""
        )
        + "(one line with the unreached ones is always printed)",
    )


def check_outputs(args: argparse.Namespace) -> None:
    """Refuse, before any work, an output location kcache could not write (KcacheError).

    `--out`, `--junit-xml` and every `--db` folder (unless `--replay-only`
    leaves them as they are): a failure found after an hour of fuzzing must
    never be lost to a read-only folder, a file where a folder should be or a
    full disk.
    """
    files.check_folder(args.out, "--out")
    junit = getattr(args, "junit_xml", None)
    if junit is not None:
        files.check_file(junit, "--junit-xml")
    if not getattr(args, "replay_only", False):
        for url in getattr(args, "db", ()):
            if url != NO_DATABASE and "://" not in url and not url.startswith(REDIS_SCHEMES):
                files.check_folder(Path(url), "--db")
