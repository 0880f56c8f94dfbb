"""A notice: one notification the app showed (the top line shows the newest; `N` lists them)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Notice:
    """One notification the app showed."""

    message: str
    title: str
    severity: str
