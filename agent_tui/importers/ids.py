"""Our ids and timestamps for imported records, derived only from the source.

Invariants:
- pure: the same source id (or timestamp) always gives the same result, so importing a file
  twice gives the same bytes;
- every id is safe as a file name (`[A-Za-z0-9_.-]`), so a session id names its log file;
- `normalize_ts` gives the log's timestamp shape (`2026-11-29T22:17:03.120Z`, UTC, milliseconds),
  which sorts as text in time order; a value it cannot read gives None and the caller keeps the
  previous timestamp.
"""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")
_SAFE = re.compile(r"[A-Za-z0-9_.]([A-Za-z0-9_.-]*[A-Za-z0-9_.])?")  # what safe_part keeps as it is


def safe_part(source_id: str) -> str:
    """`source_id` with every run of unsafe characters replaced by `-` (never empty)."""
    if _SAFE.fullmatch(source_id):  # the usual id (a uuid): nothing to replace or strip
        return source_id
    return _UNSAFE.sub("-", source_id).strip("-") or "x"


def session_id_for(source_id: str, *child: str) -> str:
    """`sess_<source id>`, or `sess_<source id>_<child part>…` for a sub-agent's session."""
    return "_".join(["sess_" + safe_part(source_id), *(safe_part(part) for part in child)])


def event_id_prefix(session_id: str) -> str:
    """The start of every event id of `session_id`: `evt_` and 12 hex digits of its hash."""
    return "evt_" + hashlib.blake2b(session_id.encode(), digest_size=6).hexdigest() + "_"


def normalize_ts(raw: object) -> str | None:
    """A source timestamp as `YYYY-MM-DDTHH:MM:SS.mmmZ` (UTC), or None when it is not one."""
    if type(raw) is not str:
        return None
    # The common shape (both tools write it) needs no parsing.
    if len(raw) == 24 and raw[23] == "Z" and raw[19] == "." and raw[10] == "T":
        return raw
    try:
        moment = datetime.fromisoformat(raw)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


EPOCH_TS = "1970-01-01T00:00:00.000Z"
"""The timestamp of records of a source that records none (the oldest Codex format)."""
