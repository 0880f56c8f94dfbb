"""The cyclic garbage collector, paused while the reducer builds or reads a big state.

Invariants this module guarantees:
- `collector_paused()` turns the collector off for the body and back on afterwards only if it
  was on before (nested pauses and a caller's own `gc.disable()` are kept as they were), even
  when the body raises;
- it changes nothing the body computes: the views hold no reference cycles, so nothing they
  allocate waits for the collector; a pause only spares its full passes over the state, which on
  a 1M-event log cost ten times the building of the state dump (`DashboardState.to_state_dump`;
  the fold pauses it the same way, spelled out in its hot function).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """The body runs with the cyclic garbage collector off (reference counting still frees)."""
    collecting = gc.isenabled()
    if collecting:
        gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()
