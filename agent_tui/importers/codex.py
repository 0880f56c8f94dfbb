"""Codex CLI rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`) → our events.

A pure, incremental converter like the Claude Code one: `feed(line_number, raw_line)`, then
`finish()`. Two shapes of line are read:
- the current one, `{"timestamp", "type": session_meta|turn_context|response_item|event_msg|
  compacted, "payload"}`;
- the first releases' one: a header `{"id", "timestamp", …}`, then bare response items (no
  timestamps: every event gets the header's time) and `{"record_type": "state"}` lines.

How records map:
- `session_meta` → `session.created` (`client: codex`, the provider; a spawned agent's
  `source.subagent.thread_spawn` gives `parentSessionId` and its role as `agentName`); the
  record itself is also kept as a `source.record`;
- the user's prompt (`event_msg user_message`, or a user `message` item) starts a turn; context
  Codex injects as user-role messages (the project's AGENTS.md, `<environment_context>`,
  `<user_instructions>`, `<skill>`, `<turn_aborted>`, `<subagent_notification>`, …:
  `codex_words.CONTEXT_PREFIXES`) is no prompt: it is kept as a `source.record` (`message.user`)
  and starts no turn (a turn Codex started with only such input has an empty prompt); newer
  releases (0.17x) also say so themselves, part by part (`provenance` other than `user`); a prompt the IDE extension or the desktop app prefixed with the editor's state
  (`# Context from my IDE setup:` … `## My request for Codex:`) is the request after the heading,
  the editor's state kept in its turn as a `source.record` (`ide_context`); the two
  copies Codex writes of each prompt, answer and reasoning summary are matched and used once;
  input taken while a turn runs (after `task_started`) is steered input;
- assistant `message` items → `model.delta`; `function_call` / `custom_tool_call` /
  `local_shell_call` → requested, and their `*_output` → started + completed (an exit code read
  from the output), or the recorded denial (`rejected by user`) → the permission pair and
  `tool.failed{permission_denied}`; `web_search_call` → a call answered at once;
- `task_complete` / `turn_aborted` end the turn (`final` / `cancelled`); else the next prompt or
  the end of the file does; each growth of the `token_count` totals within a turn is one model
  call's `model.usage` (priced by the latest `turn_context`'s model), their sum the turn's;
- `compacted` → `context.compacted`; `spawn_agent` results and `wait` results name children and
  their final messages → `subagent.delivered` (`codex_subagents.py`);
- in a spawned agent's rollout, records older than its `session_meta` are history inherited from
  its parent: kept as `source.record`s (`inherited.<type>`), not replayed as its own turns;
- reasoning, turn contexts, snapshots, `world_state`, `token_usage_record`, … → `source.record`; a type this module does not know →
  kept, with `FILE:LINE: unsupported Codex record 'xyz' (kept as source-specific)` for the
  first of each type in a log.
"""

from __future__ import annotations

from typing import Any

import orjson

from agent_tui.costs.prices import PriceTable
from agent_tui.importers.builder import LogLine, SessionBuilder
from agent_tui.importers.codex_subagents import CodexChildren
from agent_tui.importers.codex_words import (
    CLIENT,
    CONTEXT_KINDS,
    FORMAT,
    KEPT_EVENTS,
    KEPT_LINES,
    RESPONSE_ITEMS,
    RISK,
    content_text,
    injected_parts,
    output_text,
    unreadable,
    user_request,
)
from agent_tui.importers.ids import EPOCH_TS, normalize_ts, safe_part, session_id_for
from agent_tui.importers.line_importer import UNREADABLE, LineImporter, RawLine


class CodexImporter(LineImporter):
    """Converts the lines of one Codex rollout file.

    Args:
        label: how warnings name the file (`FILE` in `FILE:LINE: …`).
        prices: what the model calls cost (the shipped table if not given).
    """

    format = FORMAT

    def __init__(self, label: str, *, prices: PriceTable | None = None) -> None:
        super().__init__(label, prices)
        self.builder: SessionBuilder | None = None
        self._early: list[tuple[str, str, dict[str, Any]]] = []
        self._meta_ts = ""
        self._inherits = False  # a spawned agent: older records are its parent's history
        self._explicit_turns = False  # the rollout marks turn starts (task_started)
        self._next_turn_id: str | None = None
        # Codex writes each prompt, answer and reasoning summary twice (an item and an event):
        # texts seen from one side wait here for their copy from the other.
        self._copies: dict[str, list[str]] = {}
        self._total: tuple[int, int, int] | None = None  # token_count totals (input, output, cached)
        self._turn_base: tuple[int, int, int] | None = None  # the totals counted so far
        self._model: str | None = None  # the model of the latest turn context (prices calls)
        self._context_tokens = 0
        self._compacted_last = False
        self._calls: dict[str, tuple[str, dict[str, Any]]] = {}  # call id → (tool, args), this turn
        self._children = CodexChildren()

    # -- the interface -------------------------------------------------------------------------
    def read_line(self, line_number: int, raw: RawLine) -> None:
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError:
            data = UNREADABLE
        if type(data) is dict:
            self._line(line_number, data)
        else:
            self._record("", *self.unreadable(line_number, raw, data))

    def finish_lines(self) -> list[LogLine]:
        if self.builder is None and self._early:
            self._nothing_imported("session_meta", [record_type for _, record_type, _ in self._early])
        if self.builder is not None:
            self._close(self.builder.last_ts)
            self.builder.finish()
        return self._take()

    def _unsupported(self, n: int, name: str) -> None:
        """The warning for a record type this module does not know: once per type and log."""
        self._warn_once(n, f"unsupported Codex record {name} (kept as source-specific)")

    def _malformed(self, n: int, ts: str, record_type: str, data: dict[str, Any], what: str) -> None:
        """A record of a known type but the wrong shape: kept as it is, and reported."""
        self._warn(n, f"Codex {record_type} {what} (kept as source-specific)")
        self._record(ts, record_type, data)

    def _record(self, ts: str, record_type: str, data: dict[str, Any]) -> None:
        if self.builder is None:
            self._early.append((ts, record_type, data))
        else:
            self.builder.record(ts, record_type, data)

    # -- routing -------------------------------------------------------------------------------
    def _line(self, n: int, data: dict[str, Any]) -> None:
        kind = data.get("type")
        payload = data.get("payload")
        if isinstance(kind, str) and isinstance(payload, dict):
            ts = normalize_ts(data.get("timestamp")) or ""
        elif self.builder is None and n == 1 and "id" in data and kind is None:
            kind, payload, ts = "session_meta", data, normalize_ts(data.get("timestamp")) or EPOCH_TS
        elif type(kind) is str and kind in RESPONSE_ITEMS:
            kind, payload, ts = "response_item", data, ""
        elif "record_type" in data:
            self._record("", f"state.{data['record_type']}", data)
            return
        else:
            self._unsupported(n, repr(kind))
            self._record(normalize_ts(data.get("timestamp")) or "", str(kind), data)
            return
        if kind == "session_meta":
            self._session_meta(ts, payload)
            return
        if self._inherits and ts and ts < self._meta_ts:
            self._record(ts, f"inherited.{kind}", payload)
            return
        if kind == "response_item":
            self._response_item(n, ts, payload)
        elif kind == "event_msg":
            self._event(n, ts, payload)
        elif kind == "compacted":
            self._compacted(ts, payload)
        elif kind == "turn_context":
            self._turn_context(ts, payload)
        elif kind in KEPT_LINES:
            self._record(ts, kind, payload)
        else:
            self._unsupported(n, repr(kind))
            self._record(ts, kind, payload)

    def _turn_context(self, ts: str, context: dict[str, Any]) -> None:
        """Its model prices the calls after it, and is the session's when none was named."""
        model = context.get("model")
        if isinstance(model, str):
            if model:
                self._model = model
            builder = self.builder
            if builder is not None and not builder.created and builder.header is not None:
                builder.header.setdefault("model", model)
        self._record(ts, "turn_context", context)

    def _session_meta(self, ts: str, meta: dict[str, Any]) -> None:
        if self.builder is not None:
            self._record(ts, "session_meta", meta)
            return
        thread = str(meta.get("id") or "unknown")
        builder = self.builder = SessionBuilder(
            session_id_for(thread), FORMAT, self.out, self.counts, self.prices, self.write_to
        )
        self.sessions[builder.session_id] = builder
        parent = agent = None
        source = meta.get("source")
        sub = source.get("subagent") if isinstance(source, dict) else None
        if isinstance(sub, dict):
            spawn = sub.get("thread_spawn")
            if isinstance(spawn, dict):
                parent_thread = spawn.get("parent_thread_id")
                parent = session_id_for(str(parent_thread)) if parent_thread else None
                agent = spawn.get("agent_role") or spawn.get("agent_nickname") or "subagent"
                self._inherits = True
        elif isinstance(sub, str):
            agent = sub
        builder.describe(
            str(meta.get("cwd") or ""),
            CLIENT,
            parentSessionId=parent,
            agentName=agent,
            provider=meta.get("model_provider"),
            model=meta.get("model"),
        )
        if isinstance(meta.get("model"), str) and meta["model"]:
            self._model = meta["model"]
        self._meta_ts = ts
        builder.record(ts, "session_meta", meta)
        early, self._early = self._early, []
        for record_ts, record_type, data in early:
            builder.record(record_ts, record_type, data)

    # -- copies ----------------------------------------------------------------------------------
    def _first_copy(self, side: str, text: str) -> bool:
        """True for the first of the two copies of `text` (`side` is "item" or "event")."""
        other = "event" if side == "item" else "item"
        waiting = self._copies.get(other)
        if waiting and text in waiting:
            waiting.remove(text)
            return False
        self._copies.setdefault(side, []).append(text)
        return True

    # -- turns -----------------------------------------------------------------------------------
    def _prompt(self, n: int, ts: str, text: str, side: str) -> None:
        builder = self._builder(ts)
        if builder.turn is not None and self._explicit_turns and self._next_turn_id is None:
            builder.steer(ts, text)
            return
        self._close(ts)
        turn_id = self._next_turn_id or f"turn_L{n}"
        self._next_turn_id = None
        self._copies = {side: [text]}  # only this prompt's copy is still to come
        builder.start_turn("turn_" + safe_part(turn_id.removeprefix("turn_")), ts, text)
        self._turn_base = self._total
        self._calls = {}

    def _user_text(
        self,
        n: int,
        ts: str,
        content: Any,
        side: str,
        record: dict[str, Any],
        injected: list[bool] | None = None,
    ) -> None:
        """A user message (`side`: its item or its event copy): a prompt, with the context the
        app or the IDE put around it kept in its turn as `ide_context`; or, wholly injected
        context, kept as it came. The copies are matched on the request alone (one side may
        carry the IDE's context, the other not)."""
        request, context = user_request(content, injected)
        if not request:
            self._record(ts, "message.user" if side == "item" else "event_msg.user_message", record)
            return
        if self._first_copy(side, request):
            self._prompt(n, ts, request, side)
            if context:
                self._record(ts, "ide_context", {"text": context})

    def _close(self, ts: str, stop: str | None = None) -> None:
        if self.builder is not None:  # (closing no turn does nothing)
            self.builder.close_turn(ts, stop)

    def _count_call(self, n: int, ts: str) -> None:
        """A `token_count` in a turn whose totals grew: the growth is one model call's usage
        (Codex counts cached input inside input, as the log does)."""
        builder = self.builder
        total = self._total
        if builder is None or builder.turn is None or total is None:
            return
        base = self._turn_base or (0, 0, 0)
        grown = (total[0] - base[0], total[1] - base[1], total[2] - base[2])
        self._turn_base = total
        if grown == (0, 0, 0) or min(grown) < 0:  # a repeated count, or totals that started over
            return
        builder.call_usage(ts, f"L{n}", self._model, grown[0], grown[1], grown[2])
        builder.flush_usage(ts)

    def _builder(self, ts: str) -> SessionBuilder:
        if self.builder is None:  # no session_meta came first: name the session after the file
            self._session_meta(ts, {"id": self.label.rsplit("/", 1)[-1].removesuffix(".jsonl")})
        assert self.builder is not None
        return self.builder

    def _in_turn(self, n: int, ts: str) -> SessionBuilder:
        builder = self._builder(ts)
        marked = self._next_turn_id  # Codex started a turn whose input was only context
        if builder.ensure_turn("turn_" + safe_part((marked or f"L{n}").removeprefix("turn_")), ts):
            self._next_turn_id = None
            self._turn_base = self._total
            self._calls = {}
            if marked is None:
                self._warn(n, "model output with no prompt before it (its turn has an empty prompt)")
        return builder

    # -- response items --------------------------------------------------------------------------
    def _response_item(self, n: int, ts: str, item: dict[str, Any]) -> None:
        kind = item.get("type")
        if kind == "message":
            role = item.get("role")
            content = item.get("content")
            if unreadable(content):
                self._malformed(n, ts, f"message.{role}", item, "whose content is not text")
                return
            text = content_text(content)
            if role == "assistant":
                if text and self._first_copy("item", text):
                    self._in_turn(n, ts).delta(ts, text)
            elif role == "user":
                self._user_text(n, ts, content, "item", item, injected_parts(item))
            else:
                self._record(ts, f"message.{role}", item)
        elif kind == "reasoning":
            summary = item.get("summary")
            for part in summary if isinstance(summary, list) else ():
                if isinstance(part, dict) and isinstance(part.get("text"), str):
                    self._first_copy("item", part["text"])
            self._record(ts, "reasoning", item)
        elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
            self._tool_call(n, ts, item)
        elif kind in ("function_call_output", "custom_tool_call_output"):
            self._tool_output(n, ts, item)
        elif kind == "web_search_call":
            builder = self._in_turn(n, ts)
            call_id = "ws_" + safe_part(str(item.get("id") or f"L{n}"))
            action = item.get("action")
            builder.request_call(ts, call_id, "web_search", action if isinstance(action, dict) else {})
            builder.complete_call(ts, call_id, str(item.get("status") or "completed"))
        elif type(kind) is str and kind in RESPONSE_ITEMS:
            self._record(ts, kind, item)
        else:
            self._unsupported(n, f"'response_item.{kind}'")
            self._record(ts, f"response_item.{kind}", item)

    def _tool_call(self, n: int, ts: str, item: dict[str, Any]) -> None:
        builder = self._in_turn(n, ts)
        kind = item["type"]
        call_id = str(item.get("call_id") or item.get("id") or f"call_L{n}")
        if kind == "local_shell_call":
            tool = "local_shell"
            action = item.get("action")
            args = action if isinstance(action, dict) else {}
        elif kind == "custom_tool_call":
            tool = str(item.get("name") or "tool")
            args = {"input": item.get("input")}
        else:
            tool = str(item.get("name") or "tool")
            raw = item.get("arguments")
            try:
                decoded = orjson.loads(raw) if isinstance(raw, str) else raw
            except orjson.JSONDecodeError:
                decoded = raw
            args = decoded if isinstance(decoded, dict) else {"arguments": decoded}
        if builder.has_call(call_id):
            self._record(ts, f"response_item.{kind}", item)  # a repeated call: kept, not requested twice
            return
        builder.request_call(ts, call_id, tool, args)
        self._calls[call_id] = (tool, args)

    def _tool_output(self, n: int, ts: str, item: dict[str, Any]) -> None:
        builder = self._builder(ts)
        call_id = str(item.get("call_id") or "")
        if not builder.call_open(call_id):
            self._warn(
                n, f"tool output for a call this log did not request ({call_id}) (kept as source-specific)"
            )
            self._record(ts, f"response_item.{item.get('type')}", item)
            return
        tool, args = self._calls.get(call_id, (builder.call_tool(call_id), {}))
        text, exit_code, failed = output_text(item.get("output"))
        if tool == "spawn_agent":
            self._children.spawned(text, args)
        elif tool in ("wait", "wait_agent"):
            self._children.wait_result(builder, ts, text)
        if "rejected by user" in text[:200]:
            builder.deny_call(ts, call_id, RISK.get(tool, "execute"), text)
        elif failed:
            builder.fail_call(ts, call_id, "unknown", text)
        else:
            builder.complete_call(ts, call_id, text, exit_code)

    # -- events ----------------------------------------------------------------------------------
    def _event(self, n: int, ts: str, event: dict[str, Any]) -> None:
        kind = event.get("type")
        builder = self.builder
        if kind in ("user_message", "agent_message", "agent_reasoning"):
            self._event_text(n, ts, kind, event)
        elif kind in ("task_started", "turn_started"):
            self._close(ts)
            self._explicit_turns = True
            self._next_turn_id = str(event.get("turn_id") or f"L{n}")
            self._record(ts, f"event_msg.{kind}", event)
        elif kind in ("task_complete", "turn_complete"):
            if builder is None or builder.turn is None:  # no turn to end: kept as it came
                self._record(ts, f"event_msg.{kind}", event)
            self._close(ts, "final")
        elif kind == "turn_aborted":
            self._close(ts, "cancelled")
            self._record(ts, "event_msg.turn_aborted", event)
        elif kind == "token_count":
            if not self._token_count(event):
                self._warn(n, "token_count with counts that are not numbers (kept as source-specific)")
                self._record(ts, "event_msg.token_count", event)
            else:
                self._count_call(n, ts)
        elif kind == "context_compacted":
            if not self._compacted_last:
                self._compacted(ts, {"message": ""})
            self._compacted_last = False
            return
        elif type(kind) is str and kind in KEPT_EVENTS:
            if kind == "error" and builder is not None:
                builder.mark_provider_error()
            if kind == "exec_command_end" and builder is not None:
                builder.start_call(ts, str(event.get("call_id") or ""))
            if kind in ("collab_agent_spawn_end", "collab_tool_call"):
                self._children.announced(event)
            self._record(ts, f"event_msg.{kind}", event)
        else:
            self._unsupported(n, f"'event_msg.{kind}'")
            self._record(ts, f"event_msg.{kind}", event)
        self._compacted_last = False

    def _event_text(self, n: int, ts: str, kind: str, event: dict[str, Any]) -> None:
        """The event copy of a prompt, an answer or a reasoning summary."""
        text = event.get("text" if kind == "agent_reasoning" else "message")
        if type(text) is not str:
            self._malformed(n, ts, f"event_msg.{kind}", event, "whose text is not a string")
        elif kind == "user_message":
            if event.get("kind") in CONTEXT_KINDS:
                self._record(ts, "event_msg.user_message", event)
            else:
                self._user_text(n, ts, text, "event", event)
        elif kind == "agent_message":
            if text and self._first_copy("event", text):
                self._in_turn(n, ts).delta(ts, text)
        elif self._first_copy("event", text):
            self._record(ts, "reasoning", event)

    def _token_count(self, event: dict[str, Any]) -> bool:
        """Read the totals (False, and nothing read, when a count is not a number)."""
        info = event.get("info")
        total = info.get("total_token_usage") if isinstance(info, dict) else None
        if isinstance(total, dict):
            last = info.get("last_token_usage")  # type: ignore[union-attr]
            try:
                totals = (
                    int(total.get("input_tokens") or 0),
                    int(total.get("output_tokens") or 0),
                    int(total.get("cached_input_tokens") or 0),
                )
                context = int(last.get("input_tokens") or 0) if isinstance(last, dict) else None
            except (TypeError, ValueError):
                return False
            self._total = totals
            if context is not None:
                self._context_tokens = context
        return True

    def _compacted(self, ts: str, payload: dict[str, Any]) -> None:
        builder = self.builder
        summary = payload.get("message")
        if builder is not None and builder.turn is not None:
            builder.compacted(ts, self._context_tokens, 0, summary if isinstance(summary, str) else "")
            self._compacted_last = True
        else:
            self._record(ts, "compacted", payload)
