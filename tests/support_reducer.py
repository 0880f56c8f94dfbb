"""Builders of reducer inputs shared by the tests of `agent_tui.reducer`.

`SessionLog` writes one session's events the way the store does (numbered from 1, one second
apart, each through its JSON line and back, so the reducer sees what a replay decodes);
`approved_rename_log` is the one-turn scenario several files fold (a shell call the user allows);
`fold` applies events one by one as the live view does, and `tree` reads the session tree's
three views at once so two states can be compared on it.
"""

from __future__ import annotations

from collections.abc import Iterable

from agent_tui.events import Event, event_from_json, payload_from
from agent_tui.reducer import DashboardState, apply_event


def ts(tick: int) -> str:
    """A log timestamp `tick` seconds into the day (ISO strings sort like the times they name)."""
    return f"2026-11-29T{tick // 3600:02d}:{tick // 60 % 60:02d}:{tick % 60:02d}.000Z"


class SessionLog:
    """The events of one session as the store writes them: numbered from 1, no gaps.

    Each event goes through its JSON line and back, so the reducer sees what a replay decodes.
    """

    def __init__(
        self,
        session_id: str,
        *,
        clock: int = 0,
        parent: str | None = None,
        agent: str | None = None,
        title: str | None = None,
        cwd: str = "/work/demo",
        created: bool = True,
    ) -> None:
        self.session_id = session_id
        self.clock = clock
        self.events: list[Event] = []
        self.sequence = 0
        if created:
            self.emit(
                "session.created",
                None,
                cwd=cwd,
                client="test",
                parentSessionId=parent,
                agentName=agent,
                title=title,
            )

    def emit(self, kind: str, turn_id: str | None, **fields: object) -> Event:
        self.sequence += 1
        event = Event(
            id=f"evt_{self.session_id}_{self.sequence}",
            session_id=self.session_id,
            turn_id=turn_id,
            sequence=self.sequence,
            ts=ts(self.clock + self.sequence),
            type=kind,
            payload=payload_from(kind, fields),
        )
        decoded = event_from_json(event.to_json())
        self.events.append(decoded)
        return decoded

    # A few chains that many tests need.

    def request(self, turn_id: str, call_id: str, tool: str, risk: str, preview: str = "") -> None:
        self.emit(
            "permission.requested",
            turn_id,
            requestId="req_" + call_id,
            toolCallId=call_id,
            tool=tool,
            risk=risk,
            argsPreview=preview,
        )

    def resolve(self, turn_id: str, call_id: str, decision: str, actor: str) -> Event:
        return self.emit(
            "permission.resolved",
            turn_id,
            requestId="req_" + call_id,
            toolCallId=call_id,
            decision=decision,
            actor=actor,
        )

    def simple_turn(self, turn_id: str, prompt: str, *chunks: str, stop: str = "final") -> None:
        self.emit("turn.started", turn_id, promptPreview=prompt[:80])
        self.emit("user.message", turn_id, content=prompt)
        self.emit("context.built", turn_id, step=1, tokens=tokens(100), maxContextTokens=8000)
        for chunk in chunks:
            self.emit("model.delta", turn_id, text=chunk)
        self.emit("turn.completed", turn_id, stopReason=stop)

    def allowed_call(self, turn_id: str, call_id: str, tool: str, args: dict, *out: str) -> None:
        self.emit("model.tool_call_requested", turn_id, toolCallId=call_id, tool=tool, args=args)
        self.emit(
            "permission.requested",
            turn_id,
            requestId="req_" + call_id,
            toolCallId=call_id,
            tool=tool,
            risk="read",
            argsPreview=str(args),
        )
        self.emit(
            "permission.resolved",
            turn_id,
            requestId="req_" + call_id,
            toolCallId=call_id,
            decision="allow",
            actor="policy",
        )
        self.emit("tool.started", turn_id, toolCallId=call_id, tool=tool, argsPreview=str(args))
        for text in out:
            self.emit("tool.delta", turn_id, toolCallId=call_id, stream="stdout", text=text)
        self.emit(
            "tool.completed",
            turn_id,
            toolCallId=call_id,
            tool=tool,
            result="".join(out),
            exitCode=0,
            truncated=False,
        )


def tokens(total: int) -> dict[str, int]:
    """A `context.built` token breakdown that sums to `total`."""
    return {"instruction": total - 30, "transcript": 20, "tools": 10}


def fold(events: Iterable[Event]) -> DashboardState:
    """apply_event one by one, as the live view does."""
    state = DashboardState()
    for event in events:
        assert apply_event(state, event) is state
    return state


def tree(state: DashboardState) -> dict[str, object]:
    return {
        "roots": state.roots(),
        "children": {sid: state.children(sid) for sid in sorted(state.sessions)},
        "paths": {sid: state.agent_path(sid) for sid in sorted(state.sessions)},
    }


def approved_rename_log() -> SessionLog:
    """One turn: the model asks to `mv` a file, the policy asks the user, the user allows it once."""
    log = SessionLog("sess_lead", title="lead")
    t = "turn_1"
    log.emit("turn.started", t, promptPreview="Rename src/foo.py to bar.py")
    log.emit("user.message", t, content="Rename src/foo.py to bar.py")
    log.emit("context.built", t, step=1, tokens=tokens(500), maxContextTokens=8000)
    log.emit("model.delta", t, text="Renaming ")
    log.emit("model.delta", t, text="now.")
    args = {"cmd": "mv src/foo.py src/bar.py"}
    log.emit("model.tool_call_requested", t, toolCallId="call_1", tool="shell", args=args)
    log.emit(
        "permission.requested",
        t,
        requestId="req_1",
        toolCallId="call_1",
        tool="shell",
        risk="destructive",
        argsPreview="mv src/foo.py src/bar.py",
    )
    log.emit(
        "permission.resolved",
        t,
        requestId="req_1",
        toolCallId="call_1",
        decision="ask",
        actor="policy",
        reason="moves a file over another",
    )
    log.emit(
        "permission.resolved",
        t,
        requestId="req_1",
        toolCallId="call_1",
        decision="allow",
        actor="user",
        remember="once",
    )
    log.emit("tool.started", t, toolCallId="call_1", tool="shell", argsPreview="mv …")
    log.emit("tool.delta", t, toolCallId="call_1", stream="stdout", text="renamed\n")
    log.emit(
        "tool.completed",
        t,
        toolCallId="call_1",
        tool="shell",
        result="renamed\n",
        exitCode=0,
        truncated=False,
    )
    log.emit("context.built", t, step=2, tokens=tokens(700), maxContextTokens=8000)
    log.emit("model.delta", t, text=" Done.")
    log.emit(
        "turn.completed",
        t,
        stopReason="final",
        usage={"promptTokens": 1200, "completionTokens": 40},
    )
    return log
