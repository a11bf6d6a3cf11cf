"""Hypothesis profiles for kcache's property tests and conformance runs.

`PROFILES` maps each name to its settings.  `kcache conform`, `kcache fuzz`
and the pytest plugin pass the settings of the profile they run explicitly
and change nothing global, so a user's own tests keep their Hypothesis
profile.  A test suite that wants the profiles as Hypothesis' own calls
`load()` (`tests/conftest.py` does): it registers them and loads the one the
environment selects, `HYPOTHESIS_PROFILE` if set, else `ci` when the `CI`
variable is set, else `default`.

Hypothesis registers a built-in `ci` profile of its own and loads it whenever
`CI` is set; ours replaces it by name, deliberately, so that a CI run is
bounded by kcache's budget and not Hypothesis's (docs/conformance.md says
what each profile explores).
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Mapping
from datetime import timedelta
from pathlib import Path

from hypothesis import HealthCheck, Phase, Verbosity, settings
from hypothesis.database import DirectoryBasedExampleDatabase

from kcache.errors import KcacheError

#: failures found on this machine are replayed first on the next run
DATABASE_FOLDER = Path(".hypothesis/examples")
DATABASE = DirectoryBasedExampleDatabase(DATABASE_FOLDER)

#: no `explain` phase: after shrinking it replays the failure hundreds of
#: times to say which steps could vary, which a trace file already shows
_PHASES = (Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink)

#: the conformance machine's examples are slow to generate by Hypothesis'
#: standards (two caches per step); that is expected, not a health problem
_SLOW_IS_EXPECTED = [HealthCheck.too_slow, HealthCheck.data_too_large]

#: Hypothesis' own defaults.  A bare `settings(...)` would inherit from whatever
#: profile is loaded at import time, and Hypothesis loads its built-in `ci`
#: profile (derandomized, no database) by itself when `CI` is set.
_BASE = settings.get_profile("default")

PROFILES: Mapping[str, settings] = {
    # `kcache conform` and what `tox` runs: a pass of a few seconds that still replays saved
    # failures; 300 examples, as in CI, because the life cycles the expiry bugs need (assume,
    # finish, confirm, expire) took up to 170 of them in ten seeds
    "default": settings(
        parent=_BASE,
        max_examples=300,
        stateful_step_count=50,
        deadline=None,
        database=DATABASE,
        phases=_PHASES,
        suppress_health_check=_SLOW_IS_EXPECTED,
    ),
    # CI: a fresh clone, so no database; derandomized, so a red run is
    # reproducible and a green one means the same examples passed again
    "ci": settings(
        parent=_BASE,
        max_examples=300,
        stateful_step_count=50,
        deadline=None,
        database=None,
        derandomize=True,
        print_blob=True,
        phases=_PHASES,
        suppress_health_check=_SLOW_IS_EXPECTED,
    ),
    # `tox -e mutation`: every mutant must see the same examples, and a kill
    # needs no shrinking, so it stops at the first failure
    "mutation": settings(
        parent=_BASE,
        max_examples=200,
        stateful_step_count=50,
        deadline=None,
        database=None,
        derandomize=True,
        phases=(Phase.explicit, Phase.generate),
        suppress_health_check=_SLOW_IS_EXPECTED,
    ),
    # `kcache fuzz` and nightly runs: many long runs, every failure kept
    "fuzz": settings(
        parent=_BASE,
        max_examples=20_000,
        stateful_step_count=100,
        deadline=None,
        database=DATABASE,
        phases=_PHASES,
        suppress_health_check=_SLOW_IS_EXPECTED,
    ),
    # re-run one failure with every step printed
    "debug": settings(
        parent=_BASE,
        max_examples=10,
        deadline=None,
        database=DATABASE,
        verbosity=Verbosity.verbose,
        phases=_PHASES,
        suppress_health_check=_SLOW_IS_EXPECTED,
    ),
}

#: opt-in symbolic exploration with the hypothesis-crosshair backend; Hypothesis
#: refuses the setting unless the backend is installed (`pip install kcache[crosshair]`)
CROSSHAIR_INSTALLED = importlib.util.find_spec("hypothesis_crosshair_provider") is not None
if CROSSHAIR_INSTALLED:
    PROFILES = {
        **PROFILES,
        "crosshair": settings(
            parent=_BASE,
            backend="crosshair",
            max_examples=20,
            stateful_step_count=10,
            deadline=timedelta(seconds=60),
            database=None,
            suppress_health_check=[*_SLOW_IS_EXPECTED, HealthCheck.filter_too_much],
        ),
    }


#: every profile's name, crosshair's too where its backend is missing: what the
#: command line offers does not depend on what is installed (docs/cli.md shows it)
NAMES = tuple(sorted({*PROFILES, "crosshair"}))


def selected(environ: Mapping[str, str], requested: str | None = None) -> str:
    """The profile to run: `requested`, else `HYPOTHESIS_PROFILE`, else `ci` under CI, else
    `default`; a KcacheError says why it cannot run."""
    name = (
        requested or environ.get("HYPOTHESIS_PROFILE") or ("ci" if environ.get("CI") else "default")
    )
    if name == "crosshair" and not CROSSHAIR_INSTALLED:
        raise KcacheError(
            "the crosshair profile needs the hypothesis-crosshair backend: "
            "pip install 'kcache[crosshair]'"
        )
    if name not in PROFILES:
        raise KcacheError(
            f"HYPOTHESIS_PROFILE={name!r} is not a kcache profile; choose one of "
            + ", ".join(NAMES)
        )
    return name


def load(environ: Mapping[str, str] = os.environ) -> str:
    """Register every kcache profile with Hypothesis and load the one `environ` selects.

    Returns its name.  A profile that cannot be loaded ends the process
    with its one-line reason (this runs while a test suite starts up).
    """
    try:
        name = selected(environ)
    except KcacheError as error:
        raise SystemExit(f"kcache profiles: {error}") from None
    for each, profile in PROFILES.items():
        settings.register_profile(each, profile)
    settings.load_profile(name)
    return name
