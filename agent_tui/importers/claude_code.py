"""Claude Code session logs (`~/.claude/projects/<project>/<session>.jsonl`) → our events.

A pure, incremental converter: `feed(line_number, raw_line)` returns the events that line makes
(of any of the sessions the file holds), `finish()` what the end of the file makes. Feeding the
same lines gives the same events, so follow mode can feed appended lines as they come.

How records map (every line is used, or kept as a `source.record` with its original type):
- a user line that is a prompt (text, not a tool result, not meta, not a slash command or its
  output) starts a turn; `[Request interrupted by user…]` ends the turn `cancelled`; a user line
  Claude Code wrote itself to start a turn (`promptSource: "system"`, or an `origin.kind` such as
  `task-notification`: a background agent finished) starts a turn with an empty prompt, the line
  kept in it as `source.record` `user.<kind>`;
- assistant `text` blocks → `model.delta`; `tool_use` → `model.tool_call_requested`; the
  matching `tool_result` → `tool.started` + `tool.completed`, or `tool.failed` when `is_error`
  (a rejection by the user is the recorded denial: `permission.requested/resolved{deny}` and
  `tool.failed{permission_denied}`); a `progress` line for a call starts it earlier;
- each model call's usage (by message id; a call split over lines repeats it, the last wins) is
  a `model.usage` priced by its message's model, cache reads and cache writes included; the
  turn's total (their sum) is on `turn.completed`;
- sub-agents: sidechain lines (`isSidechain`, in this file, or in `agent-<id>.jsonl` files of
  newer versions) are child sessions `sess_<session>_agent-<id>` (or `_side-<root uuid>` for
  old inline sidechains) with `parentSessionId` and the `Task`/`Agent` call's `subagent_type`
  as `agentName`; the call's result is `subagent.delivered` in the parent, then its tool result;
  a background agent's (2.1.3xx: the result says `async_launched`) delivers when Claude Code's
  `<task-notification>` for that call comes (`<status>`, `<result>`), in the turn it starts;
- `system` `compact_boundary` plus the summary line after it → `context.compacted` (see
  `claude_code_compaction.py`);
- `cost-state` (Claude Code's own running cost of the session, `totalCostUSD`, its sub-agents'
  calls included) → the open turn's cost: `turn.completed`'s `usage.costUsd` is what of that
  total the session's closed turns do not account for, as for an ACP agent that reports its cost
  (the calls' `model.usage` keep our prices), so the session costs what Claude Code says; the
  record is kept too;
- `api-request`, `api-request-blob`, `api-request-shape`, `content-replacement`, … that carry an
  `agentId` (Claude Code writes them into a sub-agent's own log, without `isSidechain`) belong to
  that sub-agent's session;
- `thinking` blocks, `system` notes, `summary`, `file-history-snapshot`, `progress`, the session
  state records of 2.1 (`tools-used`, `atis-latch`, `api-request*`, …: `KNOWN_RECORDS`) →
  `source.record` (thinking as recordType `thinking`), quietly;
- a record type this module does not know → `source.record`, and the first of each type in a
  log gives the warning `FILE:LINE: unsupported Claude Code record 'xyz' (kept as
  source-specific)` (once per type and log, however many lines have it).
"""

from __future__ import annotations

from typing import Any

import orjson

from agent_tui.costs.prices import PriceTable
from agent_tui.importers.builder import LogLine, SessionBuilder
from agent_tui.importers.claude_code_compaction import Compactions
from agent_tui.importers.claude_code_words import (
    AGENT_ROUTED,
    CLIENT,
    COMMAND_PREFIXES,
    COST_STATE,
    FORMAT,
    INTERRUPTED,
    KNOWN_RECORDS,
    SYSTEM_ORIGINS,
    TASK_TOOLS,
    TITLE_RECORDS,
    block_text,
    is_rejection,
    notice_field,
    risk_for,
)
from agent_tui.importers.ids import normalize_ts, safe_part, session_id_for
from agent_tui.importers.line_importer import UNREADABLE, LineImporter, RawLine


def _has_tool_result(content: list[Any]) -> bool:
    for block in content:  # noqa: SIM110 - a loop is quicker than any() over a generator
        if type(block) is dict and block.get("type") == "tool_result":
            return True
    return False


# The record types besides `KNOWN_RECORDS` kept without a warning (a message before any session,
# a line that is not a JSON object).
_QUIET = frozenset({"user", "assistant", "system", "invalid-json", "not-an-object", "line-too-long"})


def _turn_key(data: dict[str, Any], n: int) -> str:
    """The id of the turn a line starts: its `uuid`, else its line number."""
    return "turn_" + safe_part(str(data.get("uuid") or f"line-{n}"))


class ClaudeCodeImporter(LineImporter):
    """Converts the lines of one Claude Code log file.

    Args:
        label: how warnings name the file (`FILE` in `FILE:LINE: …`).
        agent_hints: agent id → (agent type, description), from `agent-<id>.meta.json` files, for
            sub-agent logs whose `Task` call is in another file.
        prices: what the model calls cost (the shipped table if not given).
    """

    format = FORMAT

    def __init__(
        self,
        label: str,
        agent_hints: dict[str, tuple[str, str]] | None = None,
        *,
        prices: PriceTable | None = None,
    ) -> None:
        super().__init__(label, prices)
        self.agent_hints = agent_hints or {}
        self._current: SessionBuilder | None = None  # the main session of the latest line
        self._early: list[tuple[str, str, dict[str, Any], str | None]] = []  # before any session
        self._side_roots: dict[str, str] = {}  # sidechain uuid → its child key
        self._tasks: dict[
            str, tuple[str, str, str, str]
        ] = {}  # call id → (parent, type, description, prompt)
        self._task_child: dict[str, str] = {}  # call id → child session id
        self._launched: dict[str, tuple[str, str]] = {}  # background agent's call id → (child, type)
        self._compactions = Compactions()
        self._ids: dict[str, str] = {}  # source session id → ours
        self._current_source: str | None = None  # the source session id of `_current`
        self._usage_key: Any = None  # the model call whose usage was read last, and that usage
        self._usage: dict[str, Any] | None = None
        self._cost_before: dict[str, float] = {}  # session → its reported cost before its first turn

    # -- the interface -------------------------------------------------------------------------
    def read_line(self, line_number: int, raw: RawLine) -> None:
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError:
            data = UNREADABLE
        if type(data) is not dict:
            record_type, record = self.unreadable(line_number, raw, data)
            data = {"type": record_type, **record}
        get = data.get
        kind = get("type")
        ts = get("timestamp")
        if type(ts) is not str or len(ts) != 24 or ts[23] != "Z":  # the usual shape needs no work
            ts = normalize_ts(ts) or ""
        if self._compactions.waiting is not None and not get("isCompactSummary"):
            self._compactions.flush()
        builder = self._current
        if (
            builder is None
            or get("sessionId") != self._current_source
            or not builder.created
            or get("isSidechain")
            or (get("agentId") and type(kind) is str and kind in AGENT_ROUTED)
        ):
            builder = self._route(data)
        if kind == "assistant" and builder is not None:
            self._assistant(line_number, builder, ts, data)
        elif kind == "user" and builder is not None:
            self._user(line_number, builder, ts, data)
        else:
            self._other(line_number, builder, kind, ts, data)

    def finish_lines(self) -> list[LogLine]:
        self._compactions.flush()
        if self._early:
            target = self._current or next(iter(self.sessions.values()), None)
            if target is None:
                self._nothing_imported("conversation", [record_type for _, record_type, _, _ in self._early])
            else:
                early, self._early = self._early, []
                for ts, record_type, record, _title in early:
                    target.record(ts, record_type, record)
        for builder in self.sessions.values():
            builder.finish()
        return self._take()

    # -- routing -------------------------------------------------------------------------------
    def _other(
        self, n: int, builder: SessionBuilder | None, kind: Any, ts: str, data: dict[str, Any]
    ) -> None:
        """A line that is not a user or assistant message: system lines, and records kept as they are."""
        if kind == "system" and builder is not None:
            self._system(builder, ts, data)
        else:
            known = type(kind) is str and (kind in KNOWN_RECORDS or kind in _QUIET)
            record_type = kind if isinstance(kind, str) else "unknown"
            if not known:
                self._warn_once(n, f"unsupported Claude Code record {kind!r} (kept as source-specific)")
            title_key = TITLE_RECORDS.get(record_type)
            title = data.get(title_key) if title_key else None
            if builder is None:
                self._early.append((ts, record_type, data, title if isinstance(title, str) else None))
                return
            if isinstance(title, str) and not builder.created:
                builder.title = title[:80]
            if kind == "progress":
                self._progress(builder, ts, data)
            elif kind == COST_STATE:
                self._cost_state(n, builder, data)
            builder.record(ts, record_type, data)

    def _cost_state(self, n: int, builder: SessionBuilder, data: dict[str, Any]) -> None:
        """The session's cost so far as Claude Code counts it (its sub-agents' calls included):
        the open turn costs what of it the session's closed turns and the time before its first
        turn (a resumed session's earlier cost) do not account for, none when they account for
        more. Claude Code writes it seldom (when it saves the session's cost), so the turn open
        then takes up what the turns before it cost beyond our prices."""
        reported = data.get("totalCostUSD")
        total = float(reported) if type(reported) is int or type(reported) is float else -1.0
        if not 0 <= total < 1e9:  # not a number (NaN fails both), negative, or absurd
            self._warn_once(n, "cost-state whose totalCostUSD is not a cost in USD (kept as source-specific)")
            return
        session = builder.session_id
        if builder.turn is None:
            if not builder.turns:
                self._cost_before[session] = total
            return
        before = self._cost_before.get(session, 0.0)
        if total < before:  # Claude Code counted from zero again
            before = self._cost_before[session] = 0.0
        builder.report_cost(max(total - before - builder.spent_usd, 0.0))

    def _route(self, data: dict[str, Any]) -> SessionBuilder | None:
        """The session a line belongs to, created when new (None before any session is known)."""
        source_session = data.get("sessionId")
        if not isinstance(source_session, str) or not source_session:
            return self._current
        main_id = self._ids.get(source_session)
        if main_id is None:
            main_id = self._ids[source_session] = session_id_for(source_session)
        kind = data.get("type")
        if data.get("isSidechain") or (type(kind) is str and kind in AGENT_ROUTED and data.get("agentId")):
            key = self._sidechain_key(data)
            session_id = session_id_for(source_session, key)
            builder = self.sessions.get(session_id)
            if builder is None:
                builder = self._new_session(session_id, data)
                agent_type, description = self.agent_hints.get(key.removeprefix("agent-"), ("", ""))
                builder.describe(
                    str(data.get("cwd") or ""),
                    CLIENT,
                    parentSessionId=main_id,
                    agentName=agent_type or "subagent",
                    title=description,
                )
        else:
            builder = self.sessions.get(main_id)
            if builder is None:
                builder = self._new_session(main_id, data)
                builder.describe(str(data.get("cwd") or ""), CLIENT)
            self._current = builder
            self._current_source = source_session
        if not builder.created and builder.header is not None and not builder.header["cwd"]:
            builder.header["cwd"] = str(data.get("cwd") or "")  # a first record without a cwd
        return builder

    def _new_session(self, session_id: str, data: dict[str, Any]) -> SessionBuilder:
        builder = SessionBuilder(session_id, FORMAT, self.out, self.counts, self.prices, self.write_to)
        self.sessions[session_id] = builder
        if self._early and not data.get("isSidechain"):
            early, self._early = self._early, []
            for ts, record_type, record, title in early:
                if title and builder.title is None:
                    builder.title = title[:80]
                builder.record(ts, record_type, record)
        return builder

    def _sidechain_key(self, data: dict[str, Any]) -> str:
        agent = data.get("agentId")
        uuid = data.get("uuid")
        if isinstance(agent, str) and agent:
            key = "agent-" + safe_part(agent)
        else:
            parent = data.get("parentUuid")
            root = self._side_roots.get(parent) if isinstance(parent, str) else None
            key = root if root is not None else "side-" + safe_part(str(uuid or "root"))
        if isinstance(uuid, str):
            self._side_roots[uuid] = key
        return key

    # -- assistant lines -----------------------------------------------------------------------
    def _assistant(self, n: int, builder: SessionBuilder, ts: str, data: dict[str, Any]) -> None:
        if data.get("isApiErrorMessage"):
            builder.record(ts, "assistant.api_error", data)
            builder.mark_provider_error()
            return
        message = data.get("message")
        if type(message) is not dict:
            message = {}
        content = message.get("content")
        if type(content) is not list:
            if not isinstance(content, str):  # no message, or content that is neither blocks nor text
                self._warn(n, "assistant line with no message content (kept as source-specific)")
                builder.record(ts, "assistant", data)
                return
            content = [{"type": "text", "text": content}]
        for block in content:
            kind = block.get("type") if type(block) is dict else None
            if kind == "text" and type(text := block.get("text")) is str:
                if text:
                    if builder.turn is None:
                        self._ensure_turn(n, builder, data, ts)
                    builder.delta(ts, text)
            elif kind == "tool_use":  # `_block`'s first case, inline: most blocks are calls
                if builder.turn is None:
                    self._ensure_turn(n, builder, data, ts)
                self._tool_use(builder, ts, block)
            else:
                self._block(n, builder, ts, data, kind, block)
        usage = message.get("usage")
        if type(usage) is dict and builder.turn is not None:
            self._call_usage(n, builder, ts, data, message, usage)

    def _block(
        self, n: int, builder: SessionBuilder, ts: str, data: dict[str, Any], kind: Any, block: Any
    ) -> None:
        """An assistant content block other than text: a tool call, thinking, or kept as it is."""
        if kind == "tool_use":
            if builder.turn is None:
                self._ensure_turn(n, builder, data, ts)
            self._tool_use(builder, ts, block)
        elif kind in ("thinking", "redacted_thinking"):
            builder.record(ts, kind, block)
        elif kind in ("server_tool_use", "web_search_tool_result", "mcp_tool_use", "mcp_tool_result"):
            builder.record(ts, "assistant." + kind, block)
        else:
            shape = "text block with no text" if kind == "text" else f"content block {kind!r}"
            self._warn(n, f"unsupported Claude Code {shape} (kept as source-specific)")
            builder.record(ts, f"assistant.{kind}", block if isinstance(block, dict) else {"value": block})

    def _call_usage(
        self,
        n: int,
        builder: SessionBuilder,
        ts: str,
        data: dict[str, Any],
        message: dict[str, Any],
        usage: dict[str, Any],
    ) -> None:
        """A model call's usage (the first line of a call split over lines that repeat it)."""
        key = message.get("id") or data.get("uuid")
        if type(key) is not str:  # no id to count the call by: the line is a call of its own
            key = str(n)
        if key == self._usage_key and usage == self._usage:  # a call split over lines repeats its usage
            return
        self._usage_key = key
        self._usage = usage
        get = usage.get
        try:
            cached = int(get("cache_read_input_tokens") or 0)
            written = int(get("cache_creation_input_tokens") or 0)
            prompt = int(get("input_tokens") or 0) + written + cached
            completion = int(get("output_tokens") or 0)
        except (TypeError, ValueError):
            self._warn(n, "usage that is not numbers (left out of the turn's usage)")
            return
        model = message.get("model")
        builder.call_usage(
            ts, key, model if type(model) is str else None, prompt, completion, cached, written
        )

    def _ensure_turn(self, n: int, builder: SessionBuilder, data: dict[str, Any], ts: str) -> None:
        if builder.ensure_turn(_turn_key(data, n), ts):
            self._warn(n, "assistant output with no prompt before it (its turn has an empty prompt)")

    def _tool_use(self, builder: SessionBuilder, ts: str, block: dict[str, Any]) -> None:
        call_id = str(block.get("id") or "")
        tool = str(block.get("name") or "tool")
        args = block.get("input")
        if not isinstance(args, dict):
            args = {"input": args}
        if not call_id or builder.has_call(call_id):
            builder.record(ts, "assistant.tool_use", block)  # a repeated block: kept, not requested twice
            return
        builder.request_call(ts, call_id, tool, args)
        if tool in TASK_TOOLS:
            self._tasks[call_id] = (
                builder.session_id,
                str(args.get("subagent_type") or "subagent"),
                str(args.get("description") or ""),
                str(args.get("prompt") or ""),
            )

    def _progress(self, builder: SessionBuilder, ts: str, data: dict[str, Any]) -> None:
        for key in ("parentToolUseID", "toolUseID"):
            call_id = data.get(key)
            if isinstance(call_id, str) and builder.call_open(call_id):
                builder.start_call(ts, call_id)
                return

    # -- user lines ----------------------------------------------------------------------------
    def _user(self, n: int, builder: SessionBuilder, ts: str, data: dict[str, Any]) -> None:
        message = data.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if data.get("isCompactSummary"):
            self._compactions.summary(builder, ts, data, block_text(content))
            return
        if data.get("isMeta"):
            builder.record(ts, "user.meta", data)
            return
        if type(content) is list and (
            # the usual tool result is the content's one block: no loop over it to find that
            (content and type(first := content[0]) is dict and first.get("type") == "tool_result")
            or _has_tool_result(content)
        ):
            self._result_blocks(n, builder, ts, content, data)
            return
        text = block_text(content)
        stripped = text.lstrip()
        if stripped.startswith(INTERRUPTED):
            if builder.turn is None:  # nothing running to interrupt: kept as it came
                builder.record(ts, "user.interrupted", data)
            builder.mark_interrupted()
            builder.close_turn(ts)
        elif stripped.startswith(COMMAND_PREFIXES):
            builder.record(ts, "user.command", data)
        elif self._from_claude_code(data):  # a turn it started itself: nobody typed this
            builder.close_turn(ts)
            builder.ensure_turn(_turn_key(data, n), ts)
            origin = data.get("origin")
            kind = origin.get("kind") if isinstance(origin, dict) else None
            builder.record(ts, "user." + (kind if isinstance(kind, str) else "system"), data)
            if kind == "task-notification":
                self._notified(builder, ts, text)
        else:
            if not builder.created and builder.header and "parentSessionId" in builder.header:
                self._bind_child(builder, ts, text)
            builder.start_turn(_turn_key(data, n), ts, text)

    def _result_blocks(
        self, n: int, builder: SessionBuilder, ts: str, content: list[Any], data: dict[str, Any]
    ) -> None:
        """A user line holding tool results: each result, an interruption, or another block kept."""
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_result":
                self._tool_result(n, builder, ts, block, data)
            elif block_text([block]).startswith(INTERRUPTED):
                builder.mark_interrupted()
            else:
                builder.record(ts, "user.content", block)

    @staticmethod
    def _from_claude_code(data: dict[str, Any]) -> bool:
        """Whether a user line is one Claude Code wrote to start a turn of its own (2.1.3xx)."""
        origin = data.get("origin")
        if type(origin) is dict and origin.get("kind") in SYSTEM_ORIGINS:
            return True
        return data.get("promptSource") == "system"

    def _bind_child(self, child: SessionBuilder, ts: str, prompt: str) -> None:
        """A sub-agent's first prompt: find the parent's Task call with that prompt (inline logs)."""
        for call_id, (parent_id, agent_type, description, task_prompt) in self._tasks.items():
            if task_prompt == prompt and call_id not in self._task_child:
                self._task_child[call_id] = child.session_id
                assert child.header is not None
                child.header["agentName"] = agent_type
                if description:
                    child.header["title"] = description
                parent = self.sessions.get(parent_id)
                if parent is not None and parent.call_open(call_id):
                    parent.start_call(ts, call_id)
                return

    def _tool_result(
        self, n: int, builder: SessionBuilder, ts: str, block: dict[str, Any], data: dict[str, Any]
    ) -> None:
        call_id = str(block.get("tool_use_id") or "")
        content = block.get("content")
        text = content if type(content) is str else block_text(content)
        tool = builder.open_call_tool(call_id)
        if tool is None:
            self._warn(
                n, f"tool result for a call this log did not request ({call_id}) (kept as source-specific)"
            )
            builder.record(ts, "user.tool_result", block)
            return
        failed = block.get("is_error")
        if tool in TASK_TOOLS:
            self._deliver(builder, ts, call_id, data, text, bool(failed))
        if not failed:
            builder.complete_call(ts, call_id, text)
        elif is_rejection(text):
            builder.deny_call(ts, call_id, risk_for(tool), text)
        elif text.startswith("Permission to use") and "denied" in text:
            builder.deny_call(ts, call_id, risk_for(tool), text, actor="policy")
        elif text.startswith(INTERRUPTED):
            builder.mark_interrupted()
            builder.fail_call(ts, call_id, "cancelled", text)
        else:
            builder.fail_call(ts, call_id, "unknown", text)

    def _deliver(
        self, parent: SessionBuilder, ts: str, call_id: str, data: dict[str, Any], text: str, failed: bool
    ) -> None:
        """A Task/Agent call's result: the child's delivery to its parent (and the child's end)."""
        task = self._tasks.pop(call_id, None)
        agent_type = task[1] if task is not None else "subagent"
        child_id = self._task_child.pop(call_id, None)
        result = data.get("toolUseResult")
        agent = result.get("agentId") if isinstance(result, dict) else None
        agent = agent or data.get("agentId")
        if isinstance(agent, str) and agent:
            source_session = str(data.get("sessionId") or "")
            child_id = session_id_for(source_session, "agent-" + safe_part(agent))
        if child_id is None:
            return
        if isinstance(result, dict) and (
            result.get("isAsync") is True or result.get("status") == "async_launched"
        ):
            self._launched[call_id] = (child_id, agent_type)  # it delivers later: a task-notification
            return
        child = self.sessions.get(child_id)
        if child is not None:
            child.close_turn(ts)
        parent.delivered(ts, child_id, agent_type, failed, text)

    def _notified(self, builder: SessionBuilder, ts: str, text: str) -> None:
        """A background agent's `<task-notification>`: its delivery to the turn it started."""
        call = notice_field(text, "tool-use-id")
        launched = self._launched.pop(call, None) if call is not None else None
        if launched is None:
            return
        child_id, agent_type = launched
        child = self.sessions.get(child_id)  # an inline side chain: its end is here too
        if child is not None:
            child.close_turn(ts)
        failed = notice_field(text, "status") not in (None, "completed")
        builder.delivered(ts, child_id, agent_type, failed, notice_field(text, "result") or "")

    # -- system lines ----------------------------------------------------------------------------
    def _system(self, builder: SessionBuilder, ts: str, data: dict[str, Any]) -> None:
        subtype = data.get("subtype")
        if subtype == "compact_boundary":
            self._compactions.boundary(builder, ts, data)
            return
        builder.record(ts, f"system.{subtype}" if isinstance(subtype, str) else "system", data)
