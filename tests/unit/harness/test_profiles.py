"""Tests for `kcache.machine.profiles`: the profiles; only `load()` makes them Hypothesis' own."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from kcache.errors import KcacheError
from kcache.machine import profiles


def python(code: str, **environ: str) -> str:
    """What `code` prints in a fresh interpreter, with `environ` added to the environment."""
    clean = {k: v for k, v in os.environ.items() if k not in {"CI", "HYPOTHESIS_PROFILE"}}
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**clean, **environ},
        timeout=120,
        check=True,
    )
    return done.stdout.strip()


#: a user's own profile, loaded before anything of kcache is imported
USERS_PROFILE = (
    "from hypothesis import settings\n"
    "settings.register_profile('users', max_examples=7)\n"
    "settings.load_profile('users')\n"
)


def test_importing_kcache_leaves_the_loaded_profile_alone() -> None:
    """Importing the profiles, the commands and the plugin changes no Hypothesis setting."""
    printed = python(
        USERS_PROFILE + "import kcache.machine.profiles, kcache.cli.main, kcache.cli.conform\n"
        "import kcache.cli.fuzz, kcache.machine.runner, kcache.pytest_plugin\n"
        "print(settings.default.max_examples, settings.get_profile('ci').max_examples)",
        CI="1",
    )
    assert printed == f"7 {settings_ci_max_examples()}"


def settings_ci_max_examples() -> int:
    """Hypothesis' own `ci` profile's budget, which kcache's must not have replaced."""
    return int(
        python("from hypothesis import settings; print(settings.get_profile('ci').max_examples)")
    )


@pytest.mark.parametrize(
    ("environ", "name"),
    [({}, "default"), ({"CI": "1"}, "ci"), ({"HYPOTHESIS_PROFILE": "mutation"}, "mutation")],
)
def test_load_registers_and_loads_the_selected_profile(environ: dict[str, str], name: str) -> None:
    """load() is what makes a kcache profile Hypothesis' current one."""
    printed = python(
        "from hypothesis import settings\nfrom kcache.machine import profiles\n"
        "print(profiles.load(), settings.default.max_examples)",
        **environ,
    )
    assert printed == f"{name} {profiles.PROFILES[name].max_examples}"


def test_unknown_profile_is_named() -> None:
    """A HYPOTHESIS_PROFILE kcache does not know is a KcacheError listing the known ones."""
    with pytest.raises(
        KcacheError, match=r"HYPOTHESIS_PROFILE='turbo' is not a kcache profile; choose one of ci, "
    ):
        profiles.selected({"HYPOTHESIS_PROFILE": "turbo"})


def test_load_of_an_unknown_profile_ends_with_one_line() -> None:
    """A suite started with a bad HYPOTHESIS_PROFILE stops with the reason, no traceback."""
    with pytest.raises(SystemExit, match=r"^kcache profiles: HYPOTHESIS_PROFILE='turbo' "):
        profiles.load({"HYPOTHESIS_PROFILE": "turbo"})


def test_crosshair_is_offered_and_explained_without_its_backend(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The crosshair profile is a choice everywhere; without the backend, running it says why."""
    assert "crosshair" in profiles.NAMES
    monkeypatch.setattr(profiles, "CROSSHAIR_INSTALLED", False)
    with pytest.raises(KcacheError, match=r"needs the hypothesis-crosshair backend"):
        profiles.selected({}, "crosshair")
    assert profiles.selected({"HYPOTHESIS_PROFILE": "crosshair"}, "fuzz") == "fuzz"
