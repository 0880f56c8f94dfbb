"""Builders of session logs for the replay tests: valid event lines, with ids and times given.

`SessionLog` collects one session's events as JSON lines (sequence numbers in order); the tests
decide the timestamps, add corrupt lines, and write the files where they want them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

BASE_MS = 1_795_000_000_000


def ts_of(millis: int) -> str:
    """An event timestamp `millis` after a fixed moment (UTC, ISO-8601 with milliseconds)."""
    from datetime import UTC, datetime

    moment = datetime.fromtimestamp((BASE_MS + millis) / 1000, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


@dataclass
class SessionLog:
    """One session's log being built: `add` appends the next event."""

    session_id: str
    lines: list[bytes] = field(default_factory=list)
    sequence: int = 0

    def add(self, kind: str, turn_id: str | None, payload: dict[str, Any], millis: int) -> bytes:
        self.sequence += 1
        line = orjson.dumps(
            {
                "v": 1,
                "id": f"evt_{self.session_id}_{self.sequence}",
                "sessionId": self.session_id,
                "turnId": turn_id,
                "sequence": self.sequence,
                "ts": ts_of(millis),
                "type": kind,
                "payload": payload,
            }
        )
        self.lines.append(line)
        return line

    def created(self, millis: int, *, parent: str | None = None, name: str | None = None) -> None:
        payload: dict[str, Any] = {"cwd": "/work/demo", "client": "tests"}
        if parent is not None:
            payload["parentSessionId"] = parent
        if name is not None:
            payload["agentName"] = name
        self.add("session.created", None, payload, millis)

    def write(self, directory: Path) -> Path:
        path = directory / f"{self.session_id}.jsonl"
        path.write_bytes(b"".join(line + b"\n" for line in self.lines))
        return path


def turn_events(turn: int, shape: str = "tool") -> list[tuple[str, dict[str, Any]]]:
    """The events of one whole turn as (type, payload): `shape` is `tool` (a shell call that
    asks), `denied`, `failed` (a failed tool and an error end), `compress` or `plain`."""
    call = f"call_{turn}"
    request = f"perm_{turn}"
    out: list[tuple[str, dict[str, Any]]] = [
        ("turn.started", {"promptPreview": f"prompt {turn}"}),
        ("user.message", {"content": f"please do task {turn}"}),
        (
            "context.built",
            {
                "step": 1,
                "tokens": {"instruction": 10, "transcript": 20 * turn, "tools": 5},
                "maxContextTokens": 8000,
            },
        ),
    ]
    if shape == "compress":
        out.append(
            ("context.compacted", {"step": 1, "beforeTokens": 9000, "afterTokens": 2000, "summary": "s"})
        )
    out += [("model.delta", {"text": f"thinking about {turn} "}), ("model.delta", {"text": "then acting"})]
    if shape in ("tool", "denied", "failed"):
        out += [
            (
                "model.tool_call_requested",
                {"toolCallId": call, "tool": "shell", "args": {"cmd": f"ls {turn}"}},
            ),
            (
                "permission.requested",
                {
                    "requestId": request,
                    "toolCallId": call,
                    "tool": "shell",
                    "risk": "execute",
                    "argsPreview": "ls",
                },
            ),
            (
                "permission.resolved",
                {"requestId": request, "toolCallId": call, "decision": "ask", "actor": "policy"},
            ),
        ]
        decision = "deny" if shape == "denied" else "allow"
        out.append(
            (
                "permission.resolved",
                {"requestId": request, "toolCallId": call, "decision": decision, "actor": "user"},
            )
        )
        if shape == "denied":
            failure = {"toolCallId": call, "tool": "shell", "errorCode": "permission_denied", "message": "no"}
            out.append(("tool.failed", failure))
        else:
            out += [
                ("tool.started", {"toolCallId": call, "tool": "shell", "argsPreview": "ls"}),
                ("tool.delta", {"toolCallId": call, "stream": "stdout", "text": f"out {turn}\n"}),
            ]
            if shape == "failed":
                out.append(
                    (
                        "tool.failed",
                        {"toolCallId": call, "tool": "shell", "errorCode": "timeout", "message": "slow"},
                    )
                )
            else:
                out.append(
                    ("tool.completed", {"toolCallId": call, "tool": "shell", "result": f"out {turn}\n"})
                )
        out.append(
            (
                "context.built",
                {
                    "step": 2,
                    "tokens": {"instruction": 10, "transcript": 30 * turn, "tools": 5},
                    "maxContextTokens": 8000,
                },
            )
        )
        out.append(("model.delta", {"text": f"done {turn}"}))
    stop = (
        {"stopReason": "error", "errorCode": "provider_failure"}
        if shape == "failed"
        else {"stopReason": "final"}
    )
    out.append(("turn.completed", stop))
    return out
