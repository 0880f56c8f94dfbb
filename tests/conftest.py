"""Shared fixtures: the anyio backend, a home in tmp_path, and (from support_events) valid events and session logs."""

from __future__ import annotations

import copy
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support_events import SAMPLE_PAYLOADS, build_event, build_session
from support_tmux import tmux  # noqa: F401  (the fixture, for every test that drives a real terminal)

from agent_tui.events import Event


@pytest.fixture(autouse=True, scope="session")
def _local_time_is_utc() -> None:
    """The dashboard shows clock times in local time: every test (and snapshot) sees UTC."""
    os.environ["TZ"] = "UTC"
    time.tzset()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that compares an SVG screenshot `snapshot`.

    A screenshot is drawn by one Textual version; an older one may shade a colour differently
    and still work. So the run on the lowest supported versions (`.ci/run`) leaves these out
    with `-m "not snapshot"`, and checks behaviour there, not pixels.
    """
    for item in items:
        if "snap_compare" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.snapshot)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def sample_payloads() -> dict[str, dict[str, Any]]:
    """A fresh copy of one valid payload per event type (tests may mutate it)."""
    return copy.deepcopy(SAMPLE_PAYLOADS)


@pytest.fixture(scope="session")
def make_event() -> Callable[..., Event]:
    """`make_event(sequence, type_name="model.delta", *, session_id=..., turn_id=..., **fields)`."""
    return build_event


@pytest.fixture(scope="session")
def make_session() -> Callable[..., list[Event]]:
    """`make_session(count, *, session_id=..., first=1)`: a valid run of one session's events."""
    return build_session


@pytest.fixture
def home_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """$HOME is `tmp_path/home` for the test (the dashboard reads and writes under it)."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    return home
