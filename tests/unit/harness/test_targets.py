"""Tests for `kcache.targets`."""

from __future__ import annotations

import signal
import sys
import types
from decimal import Decimal
from pathlib import Path

import pytest
from helpers.paths import TEST_ADAPTERS

import kcache.impl.cache
import kcache.spec.cache
from kcache import targets
from kcache.errors import AdapterError, TargetError
from kcache.spec.releases import V1_35, Release
from kcache.targets.adapter.client import AdapterFactory


class TestResolve:
    def test_spec(self) -> None:
        """`spec` is the reference model's class."""
        assert targets.resolve("spec") is kcache.spec.cache.Cache

    def test_impl(self) -> None:
        """`impl` is the optimized cache's class."""
        assert targets.resolve("impl") is kcache.impl.cache.Cache

    def test_module_and_factory(self) -> None:
        """MODULE:FACTORY imports the module and takes the callable, dotted names allowed."""
        assert targets.resolve("kcache.spec.cache:Cache") is kcache.spec.cache.Cache
        assert targets.resolve("kcache.spec.releases:V1_35.__class__") is Release

    def test_a_module_in_the_current_folder(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """As `python -m` would: the console script has no "" on sys.path, kcache adds it."""
        (tmp_path / "beside_me.py").write_text("def make(*, ttl, release):\n    return None\n")
        monkeypatch.chdir(tmp_path)
        monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
        monkeypatch.delitem(sys.modules, "beside_me", raising=False)
        factory = targets.resolve("beside_me:make")
        assert factory.__module__ == "beside_me"
        assert sys.path[0] == str(tmp_path)

    def test_a_missing_import_inside_the_module_is_its_own_error(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Only the module itself is looked for in the current folder, not what it imports."""
        (tmp_path / "needs_more.py").write_text("import not_installed_anywhere\n")
        monkeypatch.chdir(tmp_path)
        monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
        monkeypatch.delitem(sys.modules, "needs_more", raising=False)
        with pytest.raises(TargetError) as raised:
            targets.resolve("needs_more:make")
        assert str(raised.value) == (
            "--impl needs_more:make: cannot import needs_more: ModuleNotFoundError: "
            "No module named 'not_installed_anywhere'"
        )

    def test_command_builds_an_adapter_factory_without_starting_it(self) -> None:
        """cmd: splits the command like a shell; the process starts on first use."""
        factory = targets.resolve("cmd:./adapter --name 'a b'")
        assert isinstance(factory, AdapterFactory)
        assert factory.argv == ("./adapter", "--name", "a b")

    @pytest.mark.parametrize(
        ("target", "message"),
        [
            ("specc", "--impl specc: unknown target (expected spec | impl | MODULE:FACTORY"),
            ("no_such_module:f", "--impl no_such_module:f: cannot import no_such_module: "),
            (
                "kcache.spec.cache:Cach",
                "--impl kcache.spec.cache:Cach: kcache.spec.cache has no Cach",
            ),
            (
                "kcache.spec.releases:V1_35",
                "--impl kcache.spec.releases:V1_35: V1_35 is not callable",
            ),
            (":Cache", "--impl :Cache: expected MODULE:FACTORY"),
            ("cmd:", "--impl cmd: needs a command"),
            ("cmd:./adapter 'unclosed", "--impl cmd:./adapter 'unclosed: No closing quotation"),
            (
                "go:v2.0",
                "--impl go:v2.0: expected a release (v1.35, v1.36, v1.37, v1.38), a k8s.io",
            ),
        ],
    )
    def test_bad_targets_are_one_line_errors(self, target: str, message: str) -> None:
        """Each kind of bad target says what is wrong with it."""
        with pytest.raises(TargetError) as caught:
            targets.resolve(target)
        assert str(caught.value).startswith(message)
        assert "\n" not in str(caught.value)


class TestGo:
    """`go` hands over to kcache.targets.go.factory(version), imported only then."""

    @pytest.fixture
    def go_adapter(self, monkeypatch: pytest.MonkeyPatch) -> list[str]:
        asked: list[str] = []

        def factory(version: str) -> type[kcache.spec.cache.Cache]:
            asked.append(version)
            return kcache.spec.cache.Cache

        module = types.ModuleType("kcache.targets.go")
        module.factory = factory  # type: ignore[attr-defined]
        monkeypatch.setitem(sys.modules, "kcache.targets.go", module)
        return asked

    def test_go_defaults_to_the_newest_release(self, go_adapter: list[str]) -> None:
        """Plain `go` is the release a user gets when none is named."""
        assert targets.resolve("go") is kcache.spec.cache.Cache
        assert go_adapter == ["v1.37"]

    def test_go_with_a_release(self, go_adapter: list[str]) -> None:
        """`go:v1.36` asks for the build without expiry."""
        targets.resolve("go:v1.36")
        assert go_adapter == ["v1.36"]

    def test_go_adapter_failure_is_a_target_error(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Whatever stops the Go adapter from building is reported on one line."""

        def factory(version: str) -> None:
            raise FileNotFoundError("go: command not found")

        module = types.ModuleType("kcache.targets.go")
        module.factory = factory  # type: ignore[attr-defined]
        monkeypatch.setitem(sys.modules, "kcache.targets.go", module)
        with pytest.raises(
            TargetError, match="--impl go: FileNotFoundError: go: command not found"
        ):
            targets.resolve("go")


class TestReleases:
    def test_factory_without_releases_models_all(self) -> None:
        """A plain class is taken to model every release kcache knows."""
        modelled = targets.modelled_releases(kcache.spec.cache.Cache)
        assert modelled == ("v1.35", "v1.36", "v1.37", "v1.38")

    def test_factory_lists_its_releases(self) -> None:
        """A `releases` attribute narrows it."""

        def factory(*, ttl: Decimal, release: Release) -> kcache.spec.cache.Cache:
            return kcache.spec.cache.Cache(ttl=ttl, release=release)

        factory.releases = ("v1.35",)  # type: ignore[attr-defined]
        assert targets.modelled_releases(factory) == ("v1.35",)


class TestOpened:
    def test_context_manager_factory_is_closed(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """A factory holding a process is closed when the block ends."""
        closed: list[bool] = []
        monkeypatch.setattr(AdapterFactory, "close", lambda self: closed.append(True))
        with targets.opened("cmd:./adapter") as factory:
            assert isinstance(factory, AdapterFactory)
        assert closed == [True]

    def test_plain_class_is_not_closed(self) -> None:
        """A cache class with its own close() (impl's expiry thread) is left alone."""
        with targets.opened("impl") as factory:
            cache = factory(ttl=Decimal(0), release=V1_35)
        assert cache.node_count() == 0

    def test_an_adapter_answers_within_the_step_timeout(self) -> None:
        """--step-timeout holds an adapter too: a request it leaves unanswered fails its step."""
        hanging = f"cmd:{sys.executable} {TEST_ADAPTERS / 'broken_adapter.py'} hang"
        with targets.opened(hanging, step_timeout=0.5) as factory:
            cache = factory(ttl=Decimal(0), release=V1_35)
            with pytest.raises(AdapterError, match=r"did not come within 0\.5 s"):
                cache.pod_count()

    def test_the_step_timeout_handler_is_put_back(self) -> None:
        """The SIGALRM handler the limit installs for the block is the caller's again after it."""

        def before(signum: int, frame: object) -> None:
            raise AssertionError("not called")

        previous = signal.signal(signal.SIGALRM, before)
        try:
            with targets.opened("impl") as factory:
                assert signal.getsignal(signal.SIGALRM) is not before
                factory(ttl=Decimal(0), release=V1_35).node_count()
            assert signal.getsignal(signal.SIGALRM) is before
        finally:
            signal.signal(signal.SIGALRM, previous)
