"""A session tree as a document: what an export shows, folded from the logs' events.

The document is the one model the Markdown, HTML and JSON exports render; it is built from the
events alone (nothing is read from the workspace or a clock), so an export says what the log says
and nothing more, and the same logs give the same document.

Invariants:
- every turn of a session is in it, in order, with its prompt, the model's words (one block per
  model call), each tool call with its risk, every permission decision (who, when, how long it was
  remembered), how it ended, and the turns' end reasons, times and reported usage;
- a call's diff comes from its own arguments: an `edit_file` is its `old` → `new`, a `write_file`
  is all added lines (the log does not hold what the file was before, and the export says so);
- sub-agents are children of the session that spawned them (`parentSessionId`), in the order they
  were created; a child whose parent is not in the set is a root of its own.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from agent_tui.events import Event, args_preview
from agent_tui.events.session_tree import session_label
from agent_tui.events.transcript_text import tool_failure_text

__all__ = [
    "Block",
    "Compaction",
    "Decision",
    "Delivery",
    "ExportedSession",
    "ExportedTurn",
    "ModelText",
    "Retry",
    "ToolCall",
    "UserText",
    "build_documents",
]


@dataclass
class UserText:
    text: str
    ts: str
    steered: bool = False


@dataclass
class ModelText:
    text: str
    ts: str


@dataclass(frozen=True)
class Decision:
    """One answer to a call's permission: `allow`/`deny`/`ask`, by `user`/`policy`/`system`."""

    decision: str
    actor: str
    ts: str
    remember: str | None = None
    reason: str | None = None


@dataclass
class ToolCall:
    call_id: str
    tool: str
    args: dict[str, Any]
    ts: str
    risk: str | None = None
    warning: str | None = None
    decisions: list[Decision] = field(default_factory=list)
    status: str = "requested"  # requested, running, completed, failed
    result: str = ""
    exit_code: int | None = None
    truncated: bool = False
    error: str | None = None
    ended_ts: str | None = None

    @property
    def preview(self) -> str:
        return args_preview(self.args)

    @property
    def diff(self) -> list[str] | None:
        """The change a file tool makes, as unified diff lines (None for other tools)."""
        path = self.args.get("path")
        if not isinstance(path, str):
            return None
        if self.tool == "edit_file" and isinstance(self.args.get("old"), str):
            old = str(self.args["old"]).splitlines(keepends=True)
            new = str(self.args.get("new", "")).splitlines(keepends=True)
            return _diff(old, new, path)
        if self.tool == "write_file" and isinstance(self.args.get("content"), str):
            return _diff([], str(self.args["content"]).splitlines(keepends=True), path)
        return None


@dataclass
class Delivery:
    agent_name: str
    child_session_id: str
    status: str
    text: str
    ts: str


@dataclass
class Compaction:
    before_tokens: int
    after_tokens: int
    ts: str


@dataclass
class Retry:
    attempt: int
    reason: str
    ts: str


Block = UserText | ModelText | ToolCall | Delivery | Compaction | Retry


@dataclass
class ExportedTurn:
    number: int
    turn_id: str
    started_ts: str
    prompt: str
    blocks: list[Block] = field(default_factory=list)
    ended_ts: str | None = None
    stop_reason: str | None = None
    error_code: str | None = None
    message: str | None = None
    usage: dict[str, Any] | None = None


@dataclass
class ExportedSession:
    session_id: str
    name: str
    cwd: str
    created_ts: str
    client: str
    parent_id: str | None = None
    model: str | None = None
    provider: str | None = None
    branch: str | None = None
    turns: list[ExportedTurn] = field(default_factory=list)
    children: list[ExportedSession] = field(default_factory=list)
    imported_records: int = 0

    def walk(self) -> Iterable[tuple[int, ExportedSession]]:
        """This session and its descendants, depth first, with their depth (0 here)."""
        stack: list[tuple[int, ExportedSession]] = [(0, self)]
        while stack:
            depth, session = stack.pop()
            yield depth, session
            stack.extend((depth + 1, child) for child in reversed(session.children))


def _diff(old: list[str], new: list[str], path: str) -> list[str]:
    lines = difflib.unified_diff(old, new, f"a/{path}", f"b/{path}" if new else "/dev/null")
    return [line.rstrip("\n") for line in lines]


class _Folder:
    """Folds one session's events (in sequence order) into an `ExportedSession`."""

    def __init__(self, created: Event) -> None:
        payload = created.payload
        worktree = payload.get("worktree") or {}
        self.session = ExportedSession(
            session_id=created.session_id,
            name=session_label(payload.get("agentName"), payload.get("title"), created.session_id),
            cwd=payload["cwd"],
            created_ts=created.ts,
            client=payload["client"],
            parent_id=payload.get("parentSessionId"),
            model=payload.get("model"),
            provider=payload.get("provider"),
            branch=worktree.get("branch") if isinstance(worktree, dict) else None,
        )
        self.turn: ExportedTurn | None = None
        self.text: ModelText | None = None
        self.calls: dict[str, ToolCall] = {}

    def fold(self, event: Event) -> None:
        kind, payload = event.type, event.payload
        if kind == "source.record":
            self.session.imported_records += 1
        elif kind == "turn.started":
            self.turn = ExportedTurn(
                len(self.session.turns) + 1, event.turn_id or "", event.ts, payload["promptPreview"]
            )
            self.session.turns.append(self.turn)
            self.text = None
        elif self.turn is None:
            return
        elif kind == "model.delta":
            if self.text is None:
                self.text = ModelText("", event.ts)
                self.turn.blocks.append(self.text)
            self.text.text += payload["text"]
        else:
            self.text = None  # any other event ends the model's words of this call
            if kind.startswith(("tool.", "permission.", "model.tool_call")):
                self._fold_call(kind, payload, event)
            else:
                self._fold_turn(self.turn, kind, payload, event)

    def _fold_turn(self, turn: ExportedTurn, kind: str, payload: dict[str, Any], event: Event) -> None:
        """An event of the turn itself: a message, a delivery, a compaction, a retry, its end."""
        if kind == "user.message":
            if not turn.blocks and not payload.get("steered"):
                turn.prompt = payload["content"]  # the whole prompt, not its preview
            else:
                turn.blocks.append(UserText(payload["content"], event.ts, bool(payload.get("steered"))))
        elif kind == "subagent.delivered":
            turn.blocks.append(
                Delivery(
                    payload["agentName"],
                    payload["childSessionId"],
                    payload["status"],
                    payload["text"],
                    event.ts,
                )
            )
        elif kind == "context.compacted":
            turn.blocks.append(Compaction(payload["beforeTokens"], payload["afterTokens"], event.ts))
        elif kind == "model.retry":
            turn.blocks.append(Retry(payload["attempt"], payload["reason"], event.ts))
        elif kind == "turn.completed":
            turn.ended_ts, turn.stop_reason = event.ts, payload["stopReason"]
            turn.error_code, turn.message = payload.get("errorCode"), payload.get("message")
            turn.usage = payload.get("usage")
            self.turn = None

    def _fold_call(self, kind: str, payload: dict[str, Any], event: Event) -> None:
        """An event of one tool call: its request, permission, start, output and end."""
        call = self._call(payload, event)
        if kind == "permission.requested":
            call.risk, call.warning = payload["risk"], payload.get("warning")
        elif kind == "permission.resolved":
            remember, reason = payload.get("remember"), payload.get("reason")
            call.decisions.append(Decision(payload["decision"], payload["actor"], event.ts, remember, reason))
        elif kind == "tool.started":
            call.status = "running"
        elif kind == "tool.delta":
            call.result += payload["text"]
        elif kind == "tool.completed":
            call.status, call.result, call.ended_ts = "completed", payload["result"], event.ts
            call.exit_code, call.truncated = payload.get("exitCode"), bool(payload.get("truncated"))
        elif kind == "tool.failed":
            call.status, call.error, call.ended_ts = "failed", tool_failure_text(payload), event.ts

    def _call(self, payload: dict[str, Any], event: Event) -> ToolCall:
        """The call an event names, added to the turn when first seen (its request, or a
        permission or tool event of a call it never saw requested)."""
        call_id = payload["toolCallId"]
        call = self.calls.get(call_id)
        if call is None:
            call = ToolCall(call_id, payload.get("tool", "?"), dict(payload.get("args", {})), event.ts)
            self.calls[call_id] = call
            if self.turn is not None:
                self.turn.blocks.append(call)
        return call


def build_documents(events_by_session: Iterable[Iterable[Event]]) -> list[ExportedSession]:
    """The session trees of these logs (each an iterable of one session's events), roots first
    in the order of their creation; sub-agents nested under the sessions that spawned them."""
    sessions: dict[str, ExportedSession] = {}
    for events in events_by_session:
        folder: _Folder | None = None
        for event in events:
            if folder is None:
                if event.type != "session.created":
                    break
                folder = _Folder(event)
                continue
            folder.fold(event)
        if folder is not None:
            sessions[folder.session.session_id] = folder.session
    ordered = sorted(sessions.values(), key=lambda s: (s.created_ts, s.session_id))
    roots: list[ExportedSession] = []
    for session in ordered:
        parent = sessions.get(session.parent_id or "")
        (parent.children if parent is not None else roots).append(session)
    return roots
