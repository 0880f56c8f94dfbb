"""Regenerate the fixture logs the TUI tests and screenshots read (run once, commit the output).

    /tmp/venv/bin/python tests/sample-logs/regenerate.py

Runs `scenario.json` headlessly (`agent-tui run … --approve allow`), then rewrites everything that
differs between runs (session, turn, call and request ids, timestamps, the scratch workspace path)
to fixed values, so the snapshots stay byte-stable. It writes two sets:

- `complete/`: the whole run, every turn ended (the replay tests scrub through it);
- `live/`: each session's log cut where a dashboard would catch it mid-run: the lead waits on a
  destructive `mv`, the explorer waits on its helper, the helper waits on a shell approval; the
  other sessions ended (completed, failed, cancelled).

Each cut is a prefix of that session's log, so every file is a valid log on its own.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

from agent_tui.events import event_from_dict

HERE = Path(__file__).resolve().parent
BASE_TS = datetime(2026, 11, 29, 22, 17, 3, tzinfo=UTC)
STEP = timedelta(milliseconds=137)
FIXED_CWD = "/home/ada/demo-workspace"
_ID = re.compile(r"\b(sess|turn|call|perm)_([0-9a-f]{12})\b")


def _fixed_id(prefix: str, key: str) -> str:
    return f"{prefix}_{hashlib.sha1(key.encode()).hexdigest()[:12]}"


def _run(sessions: Path, workspace: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "agent_tui", "run", str(HERE / "scenario.json"),
         "--sessions-dir", str(sessions), "--approve", "allow", "--workspace", str(workspace), "-q"],
        check=True,
    )


def _load(sessions: Path) -> list[dict[str, Any]]:
    lines = []
    for path in sorted(sessions.glob("*.jsonl")):
        lines += [orjson.loads(line) for line in path.read_bytes().splitlines()]
    lines.sort(key=lambda d: (d["ts"], d["sessionId"], d["sequence"]))
    return lines


def _rewrite(lines: list[dict[str, Any]], workspace: Path) -> list[dict[str, Any]]:
    names = {
        d["sessionId"]: d["payload"].get("agentName") or d["sessionId"]
        for d in lines if d["type"] == "session.created"
    }
    counters: dict[str, int] = {}
    mapping: dict[str, str] = {}

    def fixed(match: re.Match[str]) -> str:
        old = match.group(0)
        if old not in mapping:
            prefix = match.group(1)
            if prefix == "sess":
                mapping[old] = _fixed_id("sess", names.get(old, old))
            else:
                counters[prefix] = counters.get(prefix, 0) + 1
                mapping[old] = _fixed_id(prefix, f"{prefix}{counters[prefix]}")
        return mapping[old]

    roots = sorted({str(workspace.resolve()), str(workspace)}, key=len, reverse=True)

    def clean(value: Any) -> Any:
        if isinstance(value, str):
            for root in roots:
                value = value.replace(root + "/workspace", FIXED_CWD).replace(root, FIXED_CWD)
            return _ID.sub(fixed, value)
        if isinstance(value, dict):
            return {key: clean(item) for key, item in value.items()}
        if isinstance(value, list):
            return [clean(item) for item in value]
        return value

    out = []
    for rank, line in enumerate(lines):
        line = clean(line)
        line["ts"] = (BASE_TS + rank * STEP).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        line["id"] = f"evt_{line['sessionId'].removeprefix('sess_')}_{line['sequence']}"
        out.append(line)
    return out


def _cut_after(events: list[dict[str, Any]], test) -> list[dict[str, Any]]:  # type: ignore[no-untyped-def]
    for index, event in enumerate(events):
        if test(event, events[:index]):
            return events[: index + 1]
    raise SystemExit("regenerate.py: a cut point was not found; did scenario.json change?")


def _ask_for(risk: str):  # type: ignore[no-untyped-def]
    def test(event: dict[str, Any], before: list[dict[str, Any]]) -> bool:
        if event["type"] != "permission.resolved" or event["payload"]["decision"] != "ask":
            return False
        call = event["payload"]["toolCallId"]
        return any(
            e["type"] == "permission.requested" and e["payload"]["toolCallId"] == call
            and e["payload"]["risk"] == risk for e in before
        )
    return test


def _waiting(event: dict[str, Any], before: list[dict[str, Any]]) -> bool:
    return event["type"] == "tool.started" and event["payload"]["tool"] == "wait_agent"


CUTS = {"lead": _ask_for("destructive"), "explorer": _waiting, "grep-helper": _ask_for("execute")}


def _write(directory: Path, by_session: dict[str, list[dict[str, Any]]]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for old in directory.glob("*.jsonl"):
        old.unlink()
    for session_id, events in by_session.items():
        data = b"".join(event_from_dict(e).to_json() + b"\n" for e in events)
        (directory / f"{session_id}.jsonl").write_bytes(data)


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="agent-tui-fixture-") as scratch:
        sessions, workspace = Path(scratch) / "sessions", Path(scratch) / "ws"
        _run(sessions, workspace)
        lines = _rewrite(_load(sessions), workspace)
    by_session: dict[str, list[dict[str, Any]]] = {}
    for line in lines:
        by_session.setdefault(line["sessionId"], []).append(line)
    for events in by_session.values():
        events.sort(key=lambda d: d["sequence"])
    _write(HERE / "complete", by_session)
    live = {}
    for session_id, events in by_session.items():
        name = events[0]["payload"].get("agentName")
        live[session_id] = _cut_after(events, CUTS[name]) if name in CUTS else events
    _write(HERE / "live", live)
    print(f"wrote {len(lines)} events of {len(by_session)} sessions to complete/ and live/")


if __name__ == "__main__":
    main()
