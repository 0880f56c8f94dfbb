"""The collector pause the fold and the state dump run under: off inside, as it was after."""

from __future__ import annotations

import gc

import pytest

from agent_tui.reducer.collector import collector_paused


def test_the_collector_is_off_inside_and_on_again_after_even_when_the_body_raises() -> None:
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("boom")
    assert gc.isenabled()


def test_a_collector_the_caller_turned_off_stays_off() -> None:
    gc.disable()
    try:
        with collector_paused(), collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()
