"""One imported session being written as our events: sequences, ids, timestamps, turn chains.

The importers decide what a source record means; a `SessionBuilder` turns that into events that
obey the log's rules whatever the source did. Invariants:

- `session.created` is sequence 1; sequences rise by one; event ids are `evt_<hash>_<sequence>`;
- a timestamp never goes back within a session: an earlier (or missing) source time is clamped
  to the last one written, so the replay's time order keeps each session's sequence order;
- `session.created` waits for the first prompt (its first line becomes the title); what came
  before it is held and written right after it, as session-level `source.record`s;
- a turn's chain is written by the one `TurnWriter` (`events/turn_writer.py`) the engine and the
  ACP client use too, driven synchronously over this builder's sink (`run_now`): what the
  importers decide is what happened, the writer words it. A turn is `turn.started,
  user.message, …, turn.completed`, closed exactly once (`close_turn`): every tool call still
  open is answered first with `tool.failed{cancelled}`; a `final` turn that had no text stays
  `final` when its source's answer is in it as `source.record`s (nothing is invented), and
  ends `error/unknown` only when the turn holds no answer at all (the source was cut off);
- a tool call is requested once per turn, started at most once (just before its result when the
  source shows nothing earlier), answered exactly once; a recorded denial is the writer's
  `deny_call`: `permission.requested` → `permission.resolved{deny, user}` → `tool.failed{permission_denied}`;
- a `source.record` outside any turn has turnId null (a session-level record);
- a terminal agent's log weaves in what the CLI's hooks said, through `weave` only: a tool call
  the hook announced before its transcript did (the transcript's later request of the same id is
  not written again), a question asked about a call and its answer, a stop or a turn's end. The
  events `weave` writes have ids ending `_hook` (`WOVEN`), so a later process re-reading the
  transcript gives them to `weave` again where they stand and gets the same log; what follows a
  woven answer in the transcript is kept consistent with it: a denied call is only ever failed
  `permission_denied`, and a call still asked about when the transcript shows it ran (its user
  answered in the terminal) is first resolved `withdrawn`.

A builder writes log lines (`LogLine`: our envelope as a dict, keys in the log's order) to the
`out` list it was given (or, for an import, straight to its file); `as_event` makes an
`Event` of one for callers that want events (`Event.to_json()` of it gives the same bytes).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from agent_tui.costs.prices import PriceTable, shipped_prices
from agent_tui.events import Event
from agent_tui.events.model import Usage, usage_fields
from agent_tui.events.terminal_text import one_line
from agent_tui.events.turn_vocabulary import TurnEnd
from agent_tui.events.turn_writer import DONE, CallEnding, Done, TurnWriter, run_now
from agent_tui.importers.ids import EPOCH_TS, event_id_prefix

LogLine = dict[str, Any]
"""One event as a log line: `{"v", "id", "sessionId", "turnId", "sequence", "ts", "type", "payload"}`."""


WriteTo = Callable[[str], Callable[[bytes], object]]
"""Session id → the `write` of its log file (`LineImporter.write_to`)."""


_dumps = orjson.dumps
_KIND_JSON: dict[str, bytes] = {}  # event type → its JSON string and `,"payload":` (a handful)


def as_event(line: LogLine) -> Event:
    """The `Event` of a log line (its payload shared, not copied)."""
    return Event.from_checked(line)


ARGS_PREVIEW_CHARS = 200
NO_RESULT = "no result for this call was recorded in the source log"
_LEFT_OPEN = CallEnding("cancelled", NO_RESULT, "turn ended")

# What an argsPreview shows first, when the arguments have one of these keys.
_PREVIEW_KEYS = ("command", "cmd", "pattern", "query", "url", "file_path", "path", "description", "input")


def args_preview(args: dict[str, Any]) -> str:
    """A short text of a call's arguments: its most telling field, else the compact JSON."""
    for key in _PREVIEW_KEYS:
        if key not in args:
            continue
        value = args[key]
        if isinstance(value, str) and value:
            text = value
            break
        if isinstance(value, list) and value and all(isinstance(part, str) for part in value):
            text = " ".join(value)
            break
    else:
        text = orjson.dumps(args).decode()
    return one_line(text, ARGS_PREVIEW_CHARS)


WOVEN = "_hook"
"""The end of the id of an event `weave` wrote (a hook's fact, not the transcript's)."""
IN_TERMINAL = "answered in the terminal"
"""Why a question is `withdrawn` when the transcript shows its call ran or ended meanwhile."""


@dataclass(slots=True)
class _Call:
    call_id: str
    tool: str
    args: dict[str, Any]
    started: bool = False
    answered: bool = False
    # What the writer reads of an open call. An imported call never waits for a question (a
    # denial is written whole, `deny_call`); a woven one may (a terminal agent's hook asked).
    stage: str = "requested"
    request_id: str | None = None
    decision: str | None = None


@dataclass(slots=True)
class _Turn:
    turn_id: str
    writer: TurnWriter
    calls: dict[str, _Call] = field(default_factory=dict)
    interrupted: bool = False
    provider_error: bool = False
    # The sum of the `model.usage` written (`usage_total` of them, kept as they are written): how
    # many, tokens, cache counts (None until a call has one), cost (None once a call has none).
    steps: int = 0
    prompt: int = 0
    completion: int = 0
    cached: int | None = None
    cache_written: int | None = None
    cost: float | None = 0.0
    # the latest call's usage, not written yet (a source may repeat it on several lines, the
    # last wins): its call's key, its `model.usage` payload, and the figures it was made of
    pending_key: str | None = None
    pending: dict[str, Any] | None = None
    pending_parts: tuple[int, int, int | None, int | None, float | None] = (0, 0, None, None, None)
    written_keys: set[str] = field(default_factory=set)  # calls whose usage is in the log
    reported_cost: float | None = None  # the turn's cost in USD as the source reported it


@dataclass(slots=True)
class ImportCounts:
    """What an import read and wrote, for summaries and for tests that compare with the source."""

    prompts: int = 0
    tool_calls: int = 0
    tool_results: int = 0
    source_records: int = 0
    events: int = 0

    def add(self, other: ImportCounts) -> None:
        for name in self.__slots__:
            setattr(self, name, getattr(self, name) + getattr(other, name))


class SessionBuilder:
    """The events of one imported session (see the module docstring for the rules it keeps).

    Args:
        session_id: our session id (from `ids.session_id_for`).
        fmt: the source format's name, as `source.record` carries it (`claude-code`, `codex`).
        out: where events are appended.
        counts: the import's tally, shared by the sessions of one importer.
        prices: what the source's model calls cost (the shipped table if not given).
        write_to: where lines go serialized instead of `out` (`LineImporter.write_to`).
    """

    def __init__(
        self,
        session_id: str,
        fmt: str,
        out: list[LogLine],
        counts: ImportCounts,
        prices: PriceTable | None = None,
        write_to: WriteTo | None = None,
    ) -> None:
        self.session_id = session_id
        self.prices = prices if prices is not None else shipped_prices()
        self.format = fmt
        self.out = out
        self.counts = counts
        self.sequence = 0
        self.last_ts = ""
        self._prefix = event_id_prefix(session_id)
        self.header: dict[str, Any] | None = None  # session.created's payload, once known
        self.title: str | None = None  # a title the source gave (before session.created)
        self.created = False
        self._held: list[tuple[str, str, dict[str, Any]]] = []
        self.turn: _Turn | None = None
        self.turns = 0
        self.spent_usd = 0.0  # what its closed turns cost (those with a known cost)
        self._ts = ""  # the time of what the writer writes now
        self._sink = self._write_line  # the writers' commit, bound once
        self._write_to = write_to
        self._put: Callable[[bytes], object] | None = None  # its file's write, once it has a line
        # What `_write_line` serialized last: the time it was given (`last_ts` is it clamped),
        # the turn id (to its file only), and their bytes.
        self._id_start = b'{"v":1,"id":"' + self._prefix.encode()
        self._ts_of: str | None = None
        self._ts_json = b""
        self._turn_of: str | bool | None = False  # (False: a first line's turn id, None too, differs)
        self._head = b""

    # -- writing -------------------------------------------------------------------------------
    def _write_line(self, turn_id: str | None, kind: str, fields: dict[str, Any]) -> Done:
        """The writer's commit: one line, at the time of the source record being read (`_emit`,
        inline: it runs for nearly every line)."""
        ts = self._ts
        if ts is self._ts_of:  # the same record's time again: clamped and serialized already
            ts = self.last_ts
        else:
            self._ts_of = ts
            if ts < self.last_ts:
                ts = self.last_ts
            self.last_ts = ts
            self._ts_json = b',"ts":%s,"type":' % _dumps(ts)
        self.sequence = sequence = self.sequence + 1
        put = self._put
        if put is None:
            if self._write_to is None:
                self._append_line(turn_id, sequence, ts, kind, fields)
                return DONE
            put = self._put = self._write_to(self.session_id)  # its file opens with its first line
        # The bytes `orjson.dumps` gives of the dict above, made from its parts: what stays the
        # same from line to line (the session and turn, the time of one source record, the
        # event type) is serialized once (test_import_written_lines holds them equal). Joined,
        # not `%`-formatted: a bytes format is parsed again for every line, at twice the cost.
        if turn_id is not self._turn_of:
            self._turn_of = turn_id
            self._head = b'","sessionId":%s,"turnId":%s,"sequence":' % (
                _dumps(self.session_id),
                _dumps(turn_id),
            )
        kind_json = _KIND_JSON.get(kind)
        if kind_json is None:
            kind_json = _KIND_JSON[kind] = _dumps(kind) + b',"payload":'
        number = b"%d" % sequence
        put(
            b"".join(
                (self._id_start, number, self._head, number, self._ts_json, kind_json, _dumps(fields), b"}\n")
            )
        )
        return DONE

    def _append_line(
        self, turn_id: str | None, sequence: int, ts: str, kind: str, fields: dict[str, Any]
    ) -> None:
        """`_write_line`'s line as a `LogLine` to `out` (a builder that writes no file)."""
        self.out.append(
            {
                "v": 1,
                "id": self._prefix + str(sequence),
                "sessionId": self.session_id,
                "turnId": turn_id,
                "sequence": sequence,
                "ts": ts,
                "type": kind,
                "payload": fields,
            }
        )

    def _emit(self, kind: str, payload: dict[str, Any], ts: str, turn_id: str | None) -> None:
        self._ts = ts
        self._write_line(turn_id, kind, payload)

    def _writer(self, ts: str) -> TurnWriter:
        """The open turn's writer, writing at `ts`."""
        turn = self.turn
        assert turn is not None
        self._ts = ts
        return turn.writer

    # -- the session ---------------------------------------------------------------------------
    def describe(self, cwd: str, client: str, **optional: Any) -> None:
        """What `session.created` will say (`parentSessionId`, `agentName`, `title`, `model`, …)."""
        header: dict[str, Any] = {"cwd": cwd, "client": client}
        # (`create` orders them; the source record, kept, still holds a value that is not text)
        header.update({key: value for key, value in optional.items() if value and type(value) is str})
        self.header = header

    def create(self, ts: str, title: str | None = None) -> None:
        """Write `session.created` (once), then the records held until now."""
        if self.created:
            return
        header = dict(self.header or {"cwd": "", "client": self.format})
        title = self.title or title
        if title and "title" not in header:
            header["title"] = title
        ordered: dict[str, Any] = {
            key: header[key]
            for key in ("cwd", "client", "parentSessionId", "agentName", "title", "provider", "model")
            if key in header
        }
        self.created = True
        stamps = [stamp for stamp in (ts, *(held[0] for held in self._held)) if stamp]
        self._emit("session.created", ordered, min(stamps) if stamps else EPOCH_TS, None)
        held, self._held = self._held, []
        for record_ts, record_type, data in held:
            self.record(record_ts, record_type, data)

    def finish(self) -> None:
        """End of the source: create the session if only held records came, close the open turn."""
        if not self.created and (self._held or self.header is not None):
            self.create("")
        self.close_turn(self.last_ts)
        self.counts.events += self.sequence

    # -- turns ---------------------------------------------------------------------------------
    def start_turn(self, turn_id: str, ts: str, prompt: str) -> None:
        """A prompt: close the open turn (the source moved on), then `turn.started, user.message`."""
        if not self.created:
            self.create(ts, prompt.strip()[:60] or None)
        self.close_turn(ts)  # the source moved on
        self.turn = _Turn(turn_id, TurnWriter(self._sink, turn_id, keeps_source=True))
        self.turns += 1
        self.counts.prompts += 1
        self._writer(ts).start(prompt)

    def steer(self, ts: str, text: str) -> None:
        """Input the source took into the running turn (not a new prompt)."""
        self.counts.prompts += 1
        self._writer(ts).steer(text)

    def ensure_turn(self, turn_id: str, ts: str) -> bool:
        """Open a turn with an empty prompt when model output comes with no prompt before it.

        Returns True when it had to (the caller reports it)."""
        if self.turn is not None:
            return False
        self.start_turn(turn_id, ts, "")
        self.counts.prompts -= 1  # not a prompt of the source
        return True

    def mark_interrupted(self) -> None:
        if self.turn is not None:
            self.turn.interrupted = True

    def mark_provider_error(self) -> None:
        if self.turn is not None:
            self.turn.provider_error = True

    def close_turn(self, ts: str, stop: str | None = None, error_code: str | None = None) -> None:
        """`turn.completed`, after the last call's usage and answering every open call. Without
        `stop`, it is read off the turn: interrupted → cancelled; a provider error → error; calls
        left open → error/unknown (the source was cut off); else final (the writer's rule for an
        answer without text). Its usage is the sum of its calls' (`Usage.of_written`), its cost
        the source's own when it reported one (`report_cost`)."""
        turn = self.turn
        if turn is None:
            return
        left_open = [call for call in turn.calls.values() if not call.answered]
        for call in left_open:
            call.answered = True
        if stop is None:
            if turn.interrupted:
                stop = "cancelled"
            elif turn.provider_error:
                stop, error_code = "error", "provider_failure"
            elif left_open:
                stop, error_code = "error", "unknown"
            else:
                stop = "final"
        self.flush_usage(ts)
        total = (  # `Usage.of_written`'s payload (`usage_total` of the calls' usage)
            usage_fields(turn.prompt, turn.completion, turn.cached, turn.cache_written, turn.cost)
            if turn.steps
            else None
        )
        if turn.reported_cost is not None:  # the source's own figure, over our prices
            total = {**(total or {"promptTokens": 0, "completionTokens": 0}), "costUsd": turn.reported_cost}
        cost = total.get("costUsd") if total is not None else None
        if cost is not None:
            self.spent_usd += cost
        if stop == "final" and not left_open and self._writer(ts).end_final(total) is not None:
            self.turn = None  # (ended without making the models: nearly every imported turn)
            return
        spent = None if total is None else Usage(**total)
        if stop == "error":
            end = TurnEnd.failed(error_code or "unknown", usage=spent)  # type: ignore[arg-type]
        else:
            end = TurnEnd(stop, usage=spent)  # type: ignore[arg-type]
        ending = self._writer(ts).end(end, left_open, _LEFT_OPEN)
        if ending is not DONE:  # several events: a coroutine, driven here (one is written already)
            run_now(ending)
        self.turn = None

    # -- usage -----------------------------------------------------------------------------------
    def call_usage(
        self,
        ts: str,
        key: str,
        model: str | None,
        prompt: int,
        completion: int,
        cached: int | None = None,
        written: int | None = None,
    ) -> None:
        """What the model call `key` of the open turn used (`prompt` counts every prompt token,
        cache reads `cached` and writes `written` included), priced as `model`. A call's usage
        may come again (the last wins); it is written as `model.usage` when another call's
        comes, or when the turn closes (`flush_usage`)."""
        turn = self.turn
        if turn is None or key in turn.written_keys:  # a call counts once, even if seen again later
            return
        if turn.pending_key is not None and turn.pending_key != key:
            self.flush_usage(ts)
        turn.pending_key = key
        # `ModelUsage.priced_fields`, inline: one per source message
        cost = self.prices.cost_usd(model, prompt, completion, cached, written)
        turn.pending = usage_fields(prompt, completion, cached, written, cost, turn.steps + 1)
        turn.pending_parts = (prompt, completion, cached, written, cost)

    def report_cost(self, usd: float) -> None:
        """The open turn's cost in USD as the source reported it: `turn.completed`'s
        `usage.costUsd` says it (its calls' `model.usage` keep our prices)."""
        if self.turn is not None:
            self.turn.reported_cost = usd

    def flush_usage(self, ts: str) -> None:
        """Write the open turn's pending call usage as `model.usage` (if any)."""
        turn = self.turn
        if turn is None or turn.pending is None:
            return
        used, turn.pending = turn.pending, None
        if turn.pending_key is not None:
            turn.written_keys.add(turn.pending_key)
        turn.pending_key = None
        turn.steps += 1  # added up as `usage_total` does (same order, so the same float)
        prompt, completion, cached, written, cost = turn.pending_parts
        turn.prompt += prompt
        turn.completion += completion
        if cached is not None:
            turn.cached = (turn.cached or 0) + cached
        if written is not None:
            turn.cache_written = (turn.cache_written or 0) + written
        turn.cost = None if turn.cost is None or cost is None else turn.cost + cost
        self._ts = ts
        turn.writer.model_usage(used)

    # -- what happens inside a turn ------------------------------------------------------------
    def delta(self, ts: str, text: str) -> None:
        turn = self.turn
        assert turn is not None
        self._ts = ts
        turn.writer.delta(text)

    def has_call(self, call_id: str) -> bool:
        return self.turn is not None and call_id in self.turn.calls

    def call_tool(self, call_id: str) -> str:
        assert self.turn is not None
        return self.turn.calls[call_id].tool

    def call_open(self, call_id: str) -> bool:
        call = self.turn.calls.get(call_id) if self.turn is not None else None
        return call is not None and not call.answered

    def open_call_tool(self, call_id: str) -> str | None:
        """The tool of the open turn's call `call_id` while it is open (`call_open` and
        `call_tool` in one look-up: every tool result asks both), else None."""
        turn = self.turn
        call = turn.calls.get(call_id) if turn is not None else None
        return None if call is None or call.answered else call.tool

    def request_call(self, ts: str, call_id: str, tool: str, args: dict[str, Any]) -> None:
        turn = self.turn
        assert turn is not None
        self._ts = ts
        turn.calls[call_id] = _Call(call_id, tool, args)
        self.counts.tool_calls += 1
        turn.writer.request_call(call_id, tool, args)

    def start_call(self, ts: str, call_id: str) -> None:
        """`tool.started` for an open call not started yet (no-op otherwise, and for a call
        denied through a hook)."""
        turn = self.turn
        if turn is None:
            return
        call = turn.calls.get(call_id)
        if call is None or call.started or call.answered or call.decision == "deny":
            return
        if call.stage == "asking":
            self._settled_in_terminal(ts, call)
        call.started = True
        self._ts = ts
        turn.writer.start_call(call_id, call.tool, args_preview(call.args))

    def complete_call(self, ts: str, call_id: str, result: str, exit_code: int | None = None) -> None:
        """`tool.completed` (after `tool.started`, when the call was not started yet)."""
        turn = self.turn
        assert turn is not None
        call = turn.calls[call_id]
        if call.decision == "deny":  # denied through a hook: it cannot have run
            self.fail_call(ts, call_id, "permission_denied", result)
            return
        self._ts = ts
        if not call.started and not call.answered:
            if call.stage == "asking":
                self.start_call(ts, call_id)
            else:  # `start_call`, inline: nearly every result comes with no start before it
                call.started = True
                turn.writer.start_call(call_id, call.tool, args_preview(call.args))
        call.answered = True  # `_answer`, inline
        self.counts.tool_results += 1
        turn.writer.complete_call(call_id, call.tool, result, exit_code)

    def fail_call(self, ts: str, call_id: str, code: str, message: str) -> None:
        """`tool.failed` of a result the source recorded."""
        call = self._answer(call_id)
        if call.decision == "deny" and not call.started:
            code = "permission_denied"
        self._settled_in_terminal(ts, call)
        self._writer(ts).fail_call(call_id, call.tool, code, message)

    def deny_call(self, ts: str, call_id: str, risk: str, message: str, actor: str = "user") -> None:
        """A denial the source recorded: the permission pair, then `tool.failed{permission_denied}`
        (only the failure when the denial was woven in already)."""
        call = self._answer(call_id)
        if call.decision == "deny":
            self._writer(ts).fail_call(call_id, call.tool, "permission_denied", message)
            return
        self._settled_in_terminal(ts, call)
        run_now(
            self._writer(ts).deny_call(
                call_id, call.tool, "perm_" + call_id, risk, args_preview(call.args), message, actor
            )
        )

    def _settled_in_terminal(self, ts: str, call: _Call) -> None:
        """A call still asked about through a hook whose transcript moves on: its question was
        answered in the terminal (`withdrawn`) before what the transcript says is written."""
        if call.stage != "asking":
            return
        call.stage, call.decision = "requested", None
        self._writer(ts).resolve(call.call_id, call.request_id, "withdrawn", "system", reason=IN_TERMINAL)

    def _answer(self, call_id: str) -> _Call:
        assert self.turn is not None
        call = self.turn.calls[call_id]
        call.answered = True
        self.counts.tool_results += 1
        return call

    def compacted(self, ts: str, before: int, after: int, summary: str) -> None:
        self._writer(ts).compacted(0, before, after, summary)

    def delivered(self, ts: str, child_session_id: str, agent_name: str, failed: bool, text: str) -> None:
        status = "failed" if failed else "completed"
        self._writer(ts).delivered(child_session_id, agent_name, status, text)

    # -- what our vocabulary cannot say --------------------------------------------------------
    def record(self, ts: str, record_type: str, data: dict[str, Any]) -> None:
        """A `source.record` (in the open turn, else session-level); held until the session exists."""
        if not self.created:
            self._held.append((ts, record_type, data))
            return
        self.counts.source_records += 1
        if self.turn is not None:
            self._writer(ts).record(self.format, record_type, data)
            return
        self._emit(
            "source.record", {"format": self.format, "recordType": record_type, "data": data}, ts, None
        )

    # -- what a terminal agent's hooks said ----------------------------------------------------
    def weave(self, ts: str, kind: str, payload: dict[str, Any]) -> bool:
        """Write one of a hook's facts as `kind` with `payload`, the events it writes marked
        `WOVEN`; returns False when it does not fit here (nothing written):

        - `model.tool_call_requested`: the call, unless the open turn has it already;
        - `permission.requested`: the question about an open call, then the policy's `ask`
          (`policy` = the session's format);
        - `permission.resolved`: the answer to the call's open question (`allow`, `deny` or
          `withdrawn`);
        - `source.record` (`format` = the session's): a note (a stop, a handing back), in the
          open turn, else session-level; `recordType` `agent-tui.turn-end` then closes the open
          turn (the CLI said its turn ended).

        A later process gives the same events back to `weave` (`Event.type`, `Event.payload`,
        `Event.ts`) where they stand in the log, and gets the same lines.
        """
        assert self._write_to is None, "an import writing its files directly weaves nothing"
        if not self.created:
            return False
        start = len(self.out)
        turn = self.turn
        call = turn.calls.get(payload.get("toolCallId", "")) if turn is not None else None
        if kind == "model.tool_call_requested":
            if turn is None or call is not None:
                return False
            self.request_call(ts, payload["toolCallId"], payload["tool"], payload["args"])
        elif kind == "permission.requested":
            if call is None or call.answered or call.started or call.stage == "asking":
                return False
            call.stage, call.request_id, call.decision = "asking", payload["requestId"], None
            writer = self._writer(ts)
            writer.request_permission(
                call.call_id,
                call.tool,
                payload["requestId"],
                payload["risk"],
                payload["argsPreview"],
                reason=payload.get("reason"),
                warning=payload.get("warning"),
            )
            writer.resolve(call.call_id, payload["requestId"], "ask", "policy", policy=self.format)
        elif kind == "permission.resolved":
            if call is None or call.stage != "asking" or call.request_id != payload["requestId"]:
                return False
            decision = payload["decision"]
            call.stage = "running" if call.started else "requested"
            call.decision = None if decision == "withdrawn" else decision
            fields = {key: payload[key] for key in ("policy", "reason", "remember", "by") if key in payload}
            self._writer(ts).resolve(call.call_id, call.request_id, decision, payload["actor"], **fields)
        elif kind == "source.record":
            ends = payload["recordType"] == "agent-tui.turn-end"
            if ends and turn is None:
                return False
            self.record(ts, payload["recordType"], payload["data"])
            if ends:
                self.close_turn(ts)
        else:
            return False
        for line in self.out[start:]:
            line["id"] += WOVEN
        return True

    def find_call(self, tool: str, args: dict[str, Any]) -> list[str]:
        """The open turn's open calls (not started, not asked about) of `tool` with `args`."""
        turn = self.turn
        if turn is None:
            return []
        return [
            call.call_id
            for call in turn.calls.values()
            if not call.answered
            and not call.started
            and call.stage != "asking"
            and call.tool == tool
            and call.args == args
        ]

    def awaits(self, call_id: str) -> bool:
        """Whether the open turn's call `call_id` is open and neither started nor asked about."""
        turn = self.turn
        call = turn.calls.get(call_id) if turn is not None else None
        return call is not None and not call.answered and not call.started and call.stage != "asking"
