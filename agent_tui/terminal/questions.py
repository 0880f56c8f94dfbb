"""`TerminalHooks`: a terminal agent's hook events, answered from the one queue.

`handle(cli, event)` is the hook socket's handler (`HookSocket`): one hook event of Claude Code
or Codex in, one `Reply` out. What each event does:

- `SessionStart`, `UserPromptSubmit`, `SubagentStart`, `SubagentStop`: follow the transcript the
  event names (caught up first); a new prompt ends a stop (`x`) of the turn before;
- `Stop`: the CLI's turn ended: woven as `agent-tui.turn-end` (the log's turn closes, once the
  transcript shows its calls' ends, waited for a few seconds: Claude Code may write them after
  its `Stop` hook) and a stop ends; `SubagentStop`, `SessionEnd`: the sub-agent's or the whole
  session's open turns end the same way, and its transcripts are let go (`TerminalLogs.end`);
- `PreToolUse` (it carries the call's id): the call is opened in the log if the transcript has
  not shown it yet (the transcript's line with the same id is not written twice);
- `PermissionRequest` (no id): matched to the `PreToolUse` before it by session, agent and input
  (else to an open call of the transcript with that input, waited for a few seconds when the
  transcript does not show it yet: Claude Code may write it after the hooks); when two match,
  the request's warning says agent-tui cannot tell which; then `permission.requested` (with the
  risk the classifier gives a shell command, shown and never acted on; an edit's change in its
  preview) and the policy's `ask` are stored, and `engine.questions.ask` waits for a person.

Invariants:
- agent-tui never answers for a person: with no one watching (`watched()` false) or an engine
  whose questions an answerer of its own answers (`--approve`), a question gets no decision at
  once and nothing is asked or stored; a hook event that is malformed, names a transcript
  outside its CLI's directory, or names a session whose log another process writes, gets no
  decision;
- a hook event of a session this host drives through ACP (`logs.acp`: a Claude Code run by its
  ACP adapter runs the user's hooks too) gets no decision at once, and nothing of it is followed,
  asked or stored: the CLI goes on to its ACP permission request, the one question asked;
- the one exception is a stop (`stop`): until the stopped turn ends, every further tool call of
  it is denied at `PreToolUse` and `PermissionRequest`, and for Claude Code a question waiting
  is answered `deny` with `interrupt` (Codex cannot end a turn from a hook); the stop is a
  `source.record` (`agent-tui.stop`) in the log;
- an answer is `permission.resolved` with who answered, then the `Reply`: `allow` (with the
  CLI's own "always" only when the person picked `always`) or `deny`;
- a question the CLI takes back is `permission.resolved{withdrawn}`: Claude Code's hook killed
  (its user answered in the terminal: the handler is cancelled) at once; Codex's after
  `hand_back_after` seconds (the hook then gets no decision: Codex opens its own prompt), with
  the reason `handed back to the terminal`.
"""

from __future__ import annotations

import contextlib
import difflib
import itertools
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from agent_tui.engine.engine import SessionEngine
from agent_tui.engine.permissions import PermissionAnswer, PermissionRequest
from agent_tui.events import Event
from agent_tui.events.json_depth import nested_deeper
from agent_tui.importers.builder import args_preview
from agent_tui.importers.claude_code_words import RISK as CLAUDE_RISKS
from agent_tui.importers.codex_words import RISK as CODEX_RISKS
from agent_tui.importers.ids import safe_part, session_id_for
from agent_tui.safety import assess_shell
from agent_tui.terminal.cli_versions import NAMES
from agent_tui.terminal.hook_socket import NO_DECISION, Reply
from agent_tui.terminal.hook_wire import Cli
from agent_tui.terminal.logs import TURN_END, TerminalLogs, TranscriptRefused

HANDED_BACK = "handed back to the terminal"
IN_TERMINAL = "answered in the terminal"
STOPPED = "stopped from agent-tui: no further tool calls this turn"
SHELL_TOOLS = frozenset({"Bash", "shell", "local_shell", "exec_command", "shell_command"})
DIFF_LINES = 40
DIFF_LINE_CHARS = 200
"""An edit's preview: at most this many lines of its diff, each at most this many characters."""
DIFF_INPUT_LINES = 2000
"""An edit with more lines than this on either side is previewed by its size only."""
ID_CHARS = 256
"""The longest tool name or call id a hook event's is taken with."""
TRANSCRIPT_WAIT = 5.0
"""Seconds a host waits (`transcript_wait`) for a transcript that lags its CLI's hooks: a
`PermissionRequest` no call matches, for the transcript to show the call; a `Stop`, for it to
show its turn's calls' ends (Claude Code may write a call's lines, even a new session's first
lines, after the hooks about them ran)."""
TRANSCRIPT_POLL = 0.05


@dataclass(frozen=True, slots=True)
class _Announced:
    """A tool call a `PreToolUse` announced: where, and with what."""

    session_id: str
    agent: str
    call_id: str
    tool: str
    args: dict[str, Any]


class TerminalHooks:
    """Answers terminal agents' hook events (see the module docstring).

    Args:
        engine: whose questions hold the requests and whose store keeps the logs (`logs`').
        logs: the transcripts followed into the engine's store.
        watched: whether someone would answer a question now (a dashboard is attached).
        hand_back_after: seconds after which a Codex question is handed back to its terminal.
        transcript_wait: seconds to wait for a transcript that lags its hooks (`TRANSCRIPT_WAIT`
            for a host of live CLIs; 0: what the transcript shows when the hook comes is all).
    """

    def __init__(
        self,
        engine: SessionEngine,
        logs: TerminalLogs,
        *,
        watched: Callable[[], bool],
        hand_back_after: float = 30.0,
        transcript_wait: float = 0.0,
    ) -> None:
        self.engine = engine
        self.transcript_wait = transcript_wait
        self.logs = logs
        self.watched = watched
        self.hand_back_after = hand_back_after
        self.warnings: list[str] = []
        self._announced: list[_Announced] = []
        self._stopped: dict[str, tuple[Cli, str]] = {}  # main session → (its CLI, whose turn), while stopped
        self._waiting: dict[str, tuple[str, str]] = {}  # request id → (session, main session)
        self._ids = itertools.count(1)
        logs.on_line = self._heard

    # -- the handler -------------------------------------------------------------------------------
    async def handle(self, cli: Cli, event: dict[str, Any]) -> Reply:
        """One hook event of `cli` → the reply its hook gives the CLI (no decision, with a
        warning, when handling it failed)."""
        try:
            return await self._handle(cli, event)
        except Exception as error:  # a bug, a store that failed: the CLI goes on as without us
            self.warnings.append(f"{NAMES.get(cli, cli)} hook event not handled: {error!r}")
            return NO_DECISION

    async def _handle(self, cli: Cli, event: dict[str, Any]) -> Reply:
        if not isinstance(event, dict) or cli not in NAMES:
            return NO_DECISION
        name = event.get("hook_event_name")
        cli_session = event.get("session_id")
        if not isinstance(name, str) or not isinstance(cli_session, str) or not cli_session:
            return NO_DECISION
        if cli_session in self.logs.acp:
            return NO_DECISION  # its ACP session asks, shows and ends it
        main = session_id_for(cli_session)
        await self._follow(cli, event)
        if name == "PreToolUse":
            return await self._pre_tool_use(cli, main, event)
        if name == "PermissionRequest":
            return await self._permission_request(cli, main, event)
        if name in ("UserPromptSubmit", "Stop", "SessionEnd"):  # a new prompt, or an end, ends a stop
            self._stopped.pop(main, None)
        if name == "Stop":
            await self._shown(cli, event, lambda: self._calls_answered(main))
            await self.logs.weave(main, "source.record", _record(cli, TURN_END, {"hook": "Stop"}))
        elif name == "SubagentStop":
            path = event.get("agent_transcript_path")
            if isinstance(path, str) and path:
                await self.logs.finish_file(cli, path)
        elif name == "SessionEnd":
            await self.logs.finish(main)
        return NO_DECISION

    async def _follow(self, cli: Cli, event: dict[str, Any]) -> None:
        """Follow the transcripts the event names (refused ones are warned about; one not
        written yet is followed when a later event names it), caught up."""
        paths: list[Any] = [event.get(key) for key in ("transcript_path", "agent_transcript_path")]
        main_path, agent = paths[0], _agent(event)
        if cli == "claude-code" and agent and isinstance(main_path, str) and main_path.endswith(".jsonl"):
            # a sub-agent's own transcript, beside its session's
            paths.append(
                str(Path(main_path[: -len(".jsonl")]) / "subagents" / f"agent-{safe_part(agent)}.jsonl")
            )
        followed = False
        for path in paths:
            if not isinstance(path, str) or not path:
                continue
            try:
                await self.logs.follow(cli, path)
                followed = True
            except TranscriptRefused as refused:
                if not refused.missing:
                    self.warnings.append(f"{NAMES[cli]} hook: {refused} (not followed)")
        if not followed:
            await self.logs.catch_up()

    async def _shown(self, cli: Cli, event: dict[str, Any], shown: Callable[[], bool]) -> None:
        """Read the transcript the event names as it is written (followed once it exists) until
        it shows what `shown` looks for, at most `transcript_wait` seconds."""
        if self.transcript_wait <= 0:
            return
        path = event.get("transcript_path")
        with anyio.move_on_after(self.transcript_wait):
            while not shown():
                await anyio.sleep(TRANSCRIPT_POLL)
                if not isinstance(path, str) or not path:
                    await self.logs.catch_up()
                    continue
                try:
                    await self.logs.follow(cli, path)
                except TranscriptRefused as refused:
                    if not refused.missing:
                        return  # said by `_follow` already

    def _calls_answered(self, session_id: str) -> bool:
        """Whether the transcript shows the end of every call of `session_id`'s open turn."""
        builder = self.logs.builder(session_id)
        turn = builder.turn if builder is not None else None
        return turn is None or all(call.answered for call in turn.calls.values())

    # -- tool calls ----------------------------------------------------------------------------------
    async def _pre_tool_use(self, cli: Cli, main: str, event: dict[str, Any]) -> Reply:
        call_id, tool, args = _call_of(event)
        if call_id and tool and args is not None:
            target = self._session_with(main, call_id) or self._agent_session(main, event)
            if target is not None:
                if self.logs.builder(target) is not None and not self._has(target, call_id):
                    await self.logs.weave(
                        target,
                        "model.tool_call_requested",
                        {"toolCallId": call_id, "tool": tool, "args": args},
                    )
                if self._has(target, call_id):
                    self._announced.append(_Announced(target, _agent(event), call_id, tool, args))
                    del self._announced[:-64]  # only the latest are matched
        if self._stopped_for(main):
            return Reply("deny", message=STOPPED)
        return NO_DECISION

    async def _permission_request(self, cli: Cli, main: str, event: dict[str, Any]) -> Reply:
        if self._stopped_for(main):
            return Reply("deny", message=STOPPED, interrupt=cli == "claude-code")
        questions = self.engine.questions
        if not self.watched() or questions.answerer is not None:
            return NO_DECISION  # no one would answer: the CLI asks in its own terminal, at once
        _, tool, args = _call_of(event)
        if not tool or args is None:
            return NO_DECISION
        agent = _agent(event)
        if not self._matches(main, agent, tool, args):
            await self._shown(cli, event, lambda: bool(self._matches(main, agent, tool, args)))
        request = await self._question(main, agent, tool, args)
        if request is None:
            return NO_DECISION
        session_id, call_id, request_id = request.session_id, request.tool_call_id, request.request_id
        self._waiting[request_id] = (session_id, self._main_of(session_id))
        try:
            answer = await self._ask(cli, request)
        except anyio.get_cancelled_exc_class():
            # The hook's connection closed: its user answered in the terminal.
            with anyio.CancelScope(shield=True):
                await self._resolve(session_id, call_id, request_id, reason=IN_TERMINAL)
            raise
        finally:
            self._waiting.pop(request_id, None)
        if answer is None:
            await self._resolve(session_id, call_id, request_id, reason=HANDED_BACK)
            return NO_DECISION
        remember = "always" if answer.decision == "allow" and answer.remember == "always" else None
        by = dict(answer.by) if answer.by else None
        answered = {"reason": answer.reason, "remember": remember, "by": by}
        await self._resolve(session_id, call_id, request_id, answer.decision, answer.actor, **answered)
        if answer.decision == "allow":
            return Reply("allow", remember=answer.remember == "always")
        stopped = self._stopped_for(main)
        message = STOPPED if stopped else answer.reason or "denied from agent-tui"
        return Reply("deny", message=message, interrupt=stopped and cli == "claude-code")

    async def _question(
        self, main: str, agent: str, tool: str, args: dict[str, Any]
    ) -> PermissionRequest | None:
        """Weave the question about the call the hook asks of into its session's log; the request
        to put to the person (None: the call is not in a log's open turn)."""
        async with self.logs.lock:
            matches = self._matches(main, agent, tool, args)
            if not matches:
                return None
            session_id, call_id = matches[0]
            builder = self.logs.builder(session_id)
            if builder is None or builder.turn is None:
                return None
            request_id = f"hook_{safe_part(call_id)}_{next(self._ids)}_{secrets.token_hex(3)}"
            risk, reason, warning = _risk(tool, args)
            if len(matches) > 1:
                warning = (
                    f"{len(matches)} {tool} calls with these same arguments wait: agent-tui cannot tell "
                    "which one the CLI asks about"
                )
            preview = _preview(tool, args)
            fields = {"requestId": request_id, "toolCallId": call_id, "tool": tool, "risk": risk}
            fields["argsPreview"] = preview
            fields.update({key: value for key, value in (("reason", reason), ("warning", warning)) if value})
            if await self.logs.weave_locked(session_id, "permission.requested", fields) is None:
                return None
            turn_id = builder.turn.turn_id
        return PermissionRequest(
            session_id=session_id,
            turn_id=turn_id,
            request_id=request_id,
            tool_call_id=call_id,
            tool=tool,
            risk=risk,  # type: ignore[arg-type]
            args_preview=preview,
            args=args,
            agent_path=self.engine.agent_path(session_id),
            warning=warning,
            reason=reason,
        )

    async def _ask(self, cli: Cli, request: PermissionRequest) -> PermissionAnswer | None:
        """The person's answer, or None when a Codex question was handed back to its terminal."""
        questions = self.engine.questions
        if cli != "codex":
            return await questions.ask(request)
        with anyio.move_on_after(self.hand_back_after):
            return await questions.ask(request)
        return None

    async def _resolve(
        self,
        session_id: str,
        call_id: str,
        request_id: str,
        decision: str = "withdrawn",
        actor: str = "system",
        **fields: Any,
    ) -> None:
        """`permission.resolved` of a question, with the `fields` that are set (by default
        `withdrawn`, for a question still asked: the transcript may have settled it already)."""
        resolved = {"requestId": request_id, "toolCallId": call_id, "decision": decision, "actor": actor}
        resolved.update({key: value for key, value in fields.items() if value})
        await self.logs.weave(session_id, "permission.resolved", resolved)

    # -- stopping ------------------------------------------------------------------------------------
    async def stop(self, session_id: str, *, by: str | None = None) -> int:
        """Stop the running turn of the terminal session `session_id`'s CLI session (a
        sub-agent's is its parent's; the turn is its own while only a background sub-agent runs):
        every further tool call of the turn is denied until that turn ends, and a question
        waiting is answered `deny` (Claude Code's hook then interrupts the turn). Returns 1 when
        a turn was running, else 0."""
        main = self._main_of(session_id)
        if main in self._stopped:
            return 0
        running = [
            sid for sid in self.logs.family(main) if (builder := self.logs.builder(sid)) and builder.turn
        ]
        if not running:
            return 0
        turn_of = running[0]  # the main session's first, when its turn runs
        builder = self.logs.builder(turn_of)
        assert builder is not None
        cli: Cli = "codex" if builder.format == "codex" else "claude-code"
        self._stopped[main] = (cli, turn_of)
        how = (
            "every further tool call of this turn is denied, and a question waiting is answered "
            "deny with interrupt"
            if cli == "claude-code"
            else "every further tool call of this turn is denied (Codex cannot end a turn from a hook)"
        )
        data: dict[str, Any] = {"how": how}
        if by:
            data["by"] = by
        await self.logs.weave(turn_of, "source.record", _record(cli, "agent-tui.stop", data))
        for request_id, (waiting_in, of_main) in list(self._waiting.items()):
            if of_main == main:
                with contextlib.suppress(LookupError):
                    self.engine.questions.answer(
                        waiting_in, request_id, PermissionAnswer("deny", reason=STOPPED)
                    )
        return 1

    def _main_of(self, session_id: str) -> str:
        """The root of `session_id`'s tree (the CLI session a sub-agent belongs to)."""
        chain = self.engine.budgets.index.chain(session_id)
        return chain[0] if chain else session_id

    def _stopped_for(self, session_id: str) -> bool:
        """Whether the turn of `session_id`'s tree was stopped (a sub-agent's is its root's)."""
        return bool(self._stopped) and self._main_of(session_id) in self._stopped

    def _heard(self, event: Event) -> None:
        """A stored event: the end of a stopped turn (the transcript's, or its CLI's word) ends
        the stop."""
        if event.type == "turn.completed" and self._stopped:
            for main, (_, turn_of) in list(self._stopped.items()):
                if turn_of == event.session_id:
                    del self._stopped[main]

    # -- matching --------------------------------------------------------------------------------------
    def _has(self, session_id: str, call_id: str) -> bool:
        builder = self.logs.builder(session_id)
        return builder is not None and builder.has_call(call_id)

    def _session_with(self, main: str, call_id: str) -> str | None:
        for session_id in self.logs.family(main):
            if self._has(session_id, call_id):
                return session_id
        return None

    def _agent_session(self, main: str, event: dict[str, Any]) -> str | None:
        """The session of the event's agent: its session's own, or (with an `agent_id`) that
        sub-agent's (Claude Code's `<main>_agent-<id>`, Codex's own thread), None when not known."""
        agent = _agent(event)
        family = self.logs.family(main)
        if not agent:
            return main if main in family else None
        for child in (f"{main}_agent-{safe_part(agent)}", session_id_for(agent)):
            if child in family:
                return child
        return None

    def _matches(self, main: str, agent: str, tool: str, args: dict[str, Any]) -> list[tuple[str, str]]:
        """The open calls a `PermissionRequest` may be about: those `PreToolUse` announced in its
        session by its agent with its input, else the transcript's open calls with that input."""
        found = []
        family = set(self.logs.family(main))
        for announced in self._announced:
            if announced.agent != agent or announced.tool != tool or not _same_input(announced.args, args):
                continue
            builder = self.logs.builder(announced.session_id)
            if announced.session_id in family and builder is not None and builder.awaits(announced.call_id):
                found.append((announced.session_id, announced.call_id))
        if found:
            return found
        for session_id in self.logs.family(main):
            builder = self.logs.builder(session_id)
            if builder is not None:
                found += [(session_id, call_id) for call_id in builder.find_call(tool, args)]
        return found


def _same_input(announced: dict[str, Any], asked: dict[str, Any]) -> bool:
    """Whether a `PermissionRequest`'s input is the `PreToolUse`'s (Codex adds the call's
    justification to the question as `description`)."""
    return {**announced, "description": None} == {**asked, "description": None}


def _record(cli: Cli, record_type: str, data: dict[str, Any]) -> dict[str, Any]:
    return {"format": cli, "recordType": record_type, "data": data}


def _agent(event: dict[str, Any]) -> str:
    agent = event.get("agent_id")
    return agent if isinstance(agent, str) else ""


def _call_of(event: dict[str, Any]) -> tuple[str, str, dict[str, Any] | None]:
    """A hook event's tool call: its id (empty when it has none), tool and input (None when it
    nests deeper than a log line may hold: such a call is neither woven in nor asked about)."""
    call_id = event.get("tool_use_id")
    tool = event.get("tool_name")
    args = event.get("tool_input")
    if not isinstance(args, dict):
        args = {} if args is None else {"input": args}
    return (
        call_id if isinstance(call_id, str) and len(call_id) <= ID_CHARS else "",
        tool if isinstance(tool, str) and len(tool) <= ID_CHARS else "",
        None if nested_deeper(args) else args,
    )


def _risk(tool: str, args: dict[str, Any]) -> tuple[str, str | None, str | None]:
    """The risk shown with a request (never acted on), and why."""
    command = args.get("command", args.get("cmd"))
    if isinstance(command, list) and all(isinstance(part, str) for part in command):
        command = " ".join(command)
    if tool in SHELL_TOOLS and isinstance(command, str):
        assessed = assess_shell(command)
        return assessed.risk, assessed.reason or None, assessed.warning
    return CLAUDE_RISKS.get(tool) or CODEX_RISKS.get(tool, "execute"), None, None  # as the importers


def _preview(tool: str, args: dict[str, Any]) -> str:
    """The request's preview: an edit's change as a short diff, else the call's telling field."""
    path = str(args.get("file_path") or args.get("path") or "")
    if tool in ("Edit", "MultiEdit"):
        edits = args.get("edits") if tool == "MultiEdit" else [args]
        if isinstance(edits, list):
            parts = [
                _diff(path, _text(edit.get("old_string")), _text(edit.get("new_string")))
                for edit in edits[:DIFF_LINES]
                if isinstance(edit, dict)
            ]
            return "\n".join(parts)
    if tool == "Write" and isinstance(args.get("content"), str):
        return _diff(path, "", args["content"])
    if tool == "apply_patch":
        patch = args.get("input", args.get("patch"))
        if isinstance(patch, str):
            return "\n".join(_clipped(patch.splitlines()[:DIFF_LINES]))
    return args_preview(args)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _clipped(lines: list[str]) -> list[str]:
    return [line if len(line) <= DIFF_LINE_CHARS else line[: DIFF_LINE_CHARS - 1] + "…" for line in lines]


def _diff(path: str, old: str, new: str) -> str:
    """A short unified diff of one edit (a summary when either side is too long to compare
    quickly: the diff runs on the event loop)."""
    before, after = old.splitlines(), new.splitlines()
    if len(before) > DIFF_INPUT_LINES or len(after) > DIFF_INPUT_LINES:
        return f"{path}: -{len(before)} +{len(after)} lines"
    lines = list(difflib.unified_diff(before, after, f"a/{path}", f"b/{path}", lineterm="", n=2))
    if len(lines) > DIFF_LINES:
        lines = [*lines[:DIFF_LINES], f"… {len(lines) - DIFF_LINES} more lines"]
    return "\n".join(_clipped(lines)) if lines else f"{path}: no change"
