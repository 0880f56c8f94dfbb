"""What an external ACP agent says during a turn, written as our events (the mapping in `docs/acp.md`).

`AcpRecorder` keeps one ACP-backed session's log: it opens and closes turns, turns each session
update into events, and holds the chains of every tool call, the agent's own and the ones it asks
us to run (files, terminals). Its methods must run on the session's `OrderedWriter`, so events
are written in the order the agent sent them.

Invariants:
- every turn is `turn.started, user.message, …, turn.completed`; `context.built` (step 1) opens
  the executing phase at the agent's first update, carrying the context use it last reported;
- every event is worded by the turn's `TurnWriter` (`events/turn_writer.py`), the one the
  engine's own turns use: this recorder decides what an update means, the writer writes it;
- a tool call is requested once its input is known: a call whose updates carried no input yet
  (an empty `rawInput`, or no command for an `execute` call; no status past `pending`, no
  content) is held, its updates merged, until one brings input, a status or content, or the
  agent asks about it, or the turn ends; the held updates before the one that released it are
  kept as `source.record`s; per-agent exceptions are in `quirks.py` and nowhere else;
- a tool call is started at most once and only after an `allow`; `in_progress` alone starts
  nothing (agents mark a call running and then ask); only evidence that it runs without a
  question (a terminal, or text once the agent said the call runs, not the text that announced
  or described it; or its end, all while nothing was asked) writes the pair of the agent's own
  policy (`actor: policy`, `policy: agent:<name>`), and an allowed call the agent marked
  running starts at the allow;
- a call is answered exactly once; `end_turn` fails a call the user denied
  `permission_denied` (also when the agent then ends its prompt `cancelled`), and has the
  writer answer every other call still open (`cancelled` when the turn was, else `unknown`),
  withdrawing an ask still waiting (`deny` by `system`);
- a cost the agent reports in USD (`usage_update.cost`, the session's so far) is its own: the
  turn's `usage.costUsd` is what it grew by in the turn; otherwise the turn's tokens are priced
  by our price table as the model the agent says it uses (its `model` config option), and have
  no cost when it named none or the table does not know it;
- whether a call is open, and how far it got, is read from the session's `open_calls` (derived
  from the stored events), never kept here; an `AcpCall` adds only what ACP knows (`acp_call.py`);
- nothing the agent sends is dropped: what our events cannot say is a `source.record`
  (`format: acp`, the update as sent); thought chunks in a row become one record; records sent
  between turns are written at the start of the next turn;
- a `final` turn carries at least one `model.delta` (the writer's rule: an empty one if the agent
  said nothing).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from acp.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    ConfigOptionUpdate,
    PermissionOption,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
    UsageUpdate,
    UserMessageChunk,
)

from agent_tui.acp.acp_call import AcpCall
from agent_tui.acp.approvals import TurnApprovals
from agent_tui.acp.mapping import (
    RECORD_FORMAT,
    as_sent,
    carries_more_than_progress,
    command_of,
    compact_json,
    exit_code_of,
    has_input,
    is_output,
    one_line,
    risk_for,
    text_of_block,
    text_of_raw_output,
    text_of_tool_content,
    tool_name_for,
    unfenced,
)
from agent_tui.acp.quirks import OUTPUT_IN_PIECES, TITLE_IS_COMMAND, AgentIdentity, applies
from agent_tui.costs.prices import shipped_prices
from agent_tui.engine.clock import new_id
from agent_tui.engine.permissions import PermissionAnswer, Verdict
from agent_tui.engine.session_info import SessionInfo, TurnHandle
from agent_tui.engine.tools.base import ToolResult
from agent_tui.events.model import Pricing, Risk, Usage
from agent_tui.events.turn_vocabulary import TurnEnd
from agent_tui.events.turn_writer import CallEnding, TurnWriter

CANCELLED = CallEnding("cancelled", "the turn ended before this call finished", "cancelled")
UNREPORTED = CallEnding("unknown", "the agent did not report an end for this call", "turn ended")
OPTIONS_KEPT = 16
OPTION_CHARS = 300
"""The most options of one question, and characters of an option's id and name, the log keeps
(what an agent sends is not ours to trust; the dashboard offers nine)."""
RESULT_CHARS = 32_000
"""The most of a tool result our log keeps (the agent still gets all of it)."""


@dataclass
class _TurnState:
    turn: TurnHandle
    executing: bool = False
    calls: dict[str, AcpCall] = field(default_factory=dict)  # by id, answered ones too
    held: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # updates of calls not requested yet
    thought: list[str] = field(default_factory=list)


class AcpRecorder:
    """The event log of one ACP-backed session.

    Args:
        info: the session (created with `client` = the agent's name), as the engine keeps it.
        agent_name: the agent's name from the config (`policy: agent:<name>`).
        prices: what models cost, for an agent that reports tokens but no cost of its own (the
            shipped table when not given).
    """

    def __init__(self, info: SessionInfo, agent_name: str, prices: Pricing | None = None) -> None:
        self.info = info
        self.agent_name = agent_name
        self.prices = prices if prices is not None else shipped_prices()
        self.model: str | None = None  # the model the agent says it uses, to price its tokens
        self._state: _TurnState | None = None
        self._between_turns: list[tuple[str, dict[str, Any]]] = []
        self._usage: tuple[int, int] | None = None
        self._cost: float | None = None  # the session's cost so far, as the agent reported it this turn
        self._cost_before = 0.0  # that cost when the last turn ended
        self.agent: AgentIdentity | None = None  # as it said in `initialize`
        self.approvals = TurnApprovals(self.info.cwd)
        self._answered: set[str] = set()  # this turn's calls that already have their result
        self.paused = False  # while the agent replays a loaded session's history (already logged)
        self._replay: str | None = None  # the history's answers a loaded session may still replay
        self._replay_rest: str | None = None  # what is left of the answer being replayed

    @property
    def turn(self) -> TurnHandle | None:
        return self._state.turn if self._state is not None else None

    def open_call(self, call_id: str) -> AcpCall | None:
        """The call `call_id` of the current turn while the log has it open."""
        state = self._state
        call = state.calls.get(call_id) if state is not None else None
        return call if call is not None and self.info.open_calls.get(call_id) is call.logged else None

    @property
    def _writer(self) -> TurnWriter:
        state = self._state
        assert state is not None, "no turn is open"
        return state.turn.writer

    # -- turns ---------------------------------------------------------------------------------
    async def begin_turn(self, turn: TurnHandle) -> None:
        self._state = _TurnState(turn)
        writer = turn.writer
        await writer.start(turn.text, turn.input_id)
        self.approvals.clear()
        self._answered.clear()
        waiting, self._between_turns = self._between_turns, []
        for record_type, data in waiting:
            await writer.record(RECORD_FORMAT, record_type, data)

    async def end_turn(self, end: TurnEnd) -> None:
        self._replay = self._replay_rest = None
        state = self._state
        if state is None:
            return
        await self._flush_thought()
        for call_id in list(state.held):
            await self._release(state, call_id)
        for call in list(state.calls.values()):
            if self.open_call(call.call_id) is call and call.decision == "deny" and not call.withdrawn:
                await self._fail(call, "permission_denied", f"{call.title} was denied permission")
        ending = CANCELLED if end.stop_reason == "cancelled" else UNREPORTED
        self._answered.update(self.info.open_calls)
        await state.turn.writer.end(self._with_cost(end), self.info.open_calls.values(), ending)
        self._state = None

    def _with_cost(self, end: TurnEnd) -> TurnEnd:
        """`end` with the agent's own cost of the turn, when it reported one in USD."""
        cost, before = self._cost, self._cost_before
        if cost is None:  # it reported no cost in USD this turn: its tokens at our prices
            return self._priced(end)
        self._cost, self._cost_before = None, cost
        spent = cost - before if cost >= before else cost  # less than before: the agent restarted
        tokens = end.usage or Usage(promptTokens=0, completionTokens=0)
        return replace(end, usage=tokens.model_copy(update={"costUsd": spent}))

    def _priced(self, end: TurnEnd) -> TurnEnd:
        usage = end.usage
        if usage is None or usage.costUsd is not None or self.model is None:
            return end
        cost = self.prices.cost_usd(
            self.model, usage.promptTokens, usage.completionTokens, usage.cachedTokens, usage.cacheWriteTokens
        )
        return end if cost is None else replace(end, usage=usage.model_copy(update={"costUsd": cost}))

    def learn_options(self, options: Iterable[Any] | None) -> None:
        """The model among an agent's config options (`session/new`'s or `session/load`'s, or a
        `config_option_update`'s): the one of category `model`, or with the id `model`."""
        for option in options or ():
            if getattr(option, "category", None) == "model" or getattr(option, "id", None) == "model":
                value = getattr(option, "current_value", None)
                if isinstance(value, str) and value:
                    self.model = value

    def _learn_model(self, update: Any) -> None:
        """The model the agent says it uses: its `model` config option, or a `…/model` in a usage
        update's `_meta` (Claude's adapter)."""
        if isinstance(update, ConfigOptionUpdate):
            self.learn_options(update.config_options)
        elif isinstance(update, UsageUpdate) and update.field_meta:
            for key, value in update.field_meta.items():
                if key.endswith("/model") and isinstance(value, str) and value:
                    self.model = value

    # -- session updates -----------------------------------------------------------------------
    async def apply(self, update: Any) -> None:
        """Write what one `session/update` says (see the mapping in `docs/acp.md`)."""
        replayed = self._replayed(update)
        if self.paused:
            return
        if replayed:
            await self._record(as_sent(update))
            return
        self._learn_model(update)
        if isinstance(update, UsageUpdate):
            self._usage = (update.used, update.size)
            cost = update.cost
            if cost is not None and cost.currency.upper() == "USD":
                self._cost = cost.amount
        state = self._state
        if state is None:
            await self._record(as_sent(update))
            return
        if isinstance(update, AgentThoughtChunk):
            text = text_of_block(update.content)
            if text is not None:
                await self._executing(state)
                state.thought.append(text)
                return
        await self._flush_thought()
        if isinstance(update, AgentMessageChunk):
            text = text_of_block(update.content)
            if text is not None:
                await self._executing(state)
                await state.turn.writer.delta(text)
                return
        elif isinstance(update, ToolCallStart | ToolCallProgress):
            await self._executing(state)
            await self._tool_update(state, update)
            return
        await self._record(as_sent(update))

    def expect_replay(self, answers: list[str]) -> None:
        """A session is being loaded: `answers` are its turns' answers as our log has them.

        An agent replays the loaded history as `user_message_chunk`s, each message followed by
        its answer's `agent_message_chunk`s. ACP has it do so before it answers `session/load`
        (those updates are not written: `pause`); Gemini CLI goes on replaying after its answer,
        into the turn that loaded the session. So, until that turn ends and once a user chunk
        came, an agent chunk that goes on with the history's answers word for word is the replay
        (kept as a `source.record`, never the turn's words); anything else ends the replay.
        """
        self._replay, self._replay_rest = "".join(answers), None

    def _replayed(self, update: Any) -> bool:
        if self._replay is None:
            return False
        if isinstance(update, UserMessageChunk):
            self._replay_rest = self._replay if self._replay_rest is None else self._replay_rest
            return True
        if isinstance(update, AgentMessageChunk) and self._replay_rest:
            text = text_of_block(update.content)
            if text and self._replay_rest.startswith(text):
                self._replay_rest = self._replay_rest[len(text) :]
                return True
        if isinstance(update, AgentMessageChunk | AgentThoughtChunk | ToolCallStart | ToolCallProgress):
            self._replay = self._replay_rest = None  # the agent's own words: the replay is over
        return False

    async def pause(self, paused: bool) -> None:
        """Stop (or resume) writing session updates: a loaded session's replayed history is in
        our log already. Queued on the writer, so it takes effect in arrival order."""
        self.paused = paused

    async def note(self, record_type: str, data: dict[str, Any]) -> None:
        """Keep something the agent said outside of session updates (its identity, a custom
        notification) as a `source.record` (at the next turn's start if none is open)."""
        if record_type in ("session/new", "session/load") and isinstance(data.get("agentInfo"), dict):
            info = data["agentInfo"]
            self.agent = AgentIdentity(str(info.get("name", "")), info.get("version"))
        if self._state is None:
            self._between_turns.append((record_type, data))
            return
        await self._flush_thought()
        await self._writer.record(RECORD_FORMAT, record_type, data)

    async def _executing(self, state: _TurnState) -> None:
        if state.executing:
            return
        state.executing = True
        used, size = self._usage or (0, 0)
        await state.turn.writer.context_built(1, {"instruction": 0, "transcript": used, "tools": 0}, size)

    async def _flush_thought(self) -> None:
        state = self._state
        if state is None or not state.thought:
            return
        text, state.thought = "".join(state.thought), []
        await self._record(
            {"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": text}}
        )

    async def _record(self, data: dict[str, Any]) -> None:
        await self.note(str(data.get("sessionUpdate", "update")), data)

    # -- the agent's tool calls ----------------------------------------------------------------
    async def _tool_update(self, state: _TurnState, update: ToolCallStart | ToolCallProgress) -> None:
        call_id = update.tool_call_id
        call = self.open_call(call_id)
        if call is None:
            if call_id in self._answered:
                await self._record(as_sent(update))  # more news of a call that already ended
                return
            held = state.held.setdefault(call_id, [])
            held.append(as_sent(update))
            if not _input_known(held):
                return
            call = await self._release(state, call_id)
        elif carries_more_than_progress(update):
            await self._record(as_sent(update))
        await self._progress(state, call, update)

    async def _progress(
        self, state: _TurnState, call: AcpCall, update: ToolCallStart | ToolCallProgress
    ) -> None:
        """What an update says of how far a requested call got (see the module docstring)."""
        exit_code = exit_code_of(update.raw_output, update.field_meta)
        if exit_code is not None:
            call.exit_code = exit_code
        text = text_of_tool_content(update.content) if update.content is not None else None
        if text is not None and call.started and applies(OUTPUT_IN_PIECES, self.agent):
            text = call.text + text  # each update brings the output's next piece
        status = update.status
        ended = status in ("completed", "failed")
        if status == "in_progress":
            call.marked_running = True
        if not call.started and call.decision != "deny":
            announcing = isinstance(update, ToolCallStart)
            runs = ended or is_output(update.content, running=call.marked_running and not announcing)
            if call.asking:
                if status == "in_progress" or runs:
                    await self._record(as_sent(update))  # it says it runs while its question waits
                return
            # Allowed, it starts once the agent says it runs; not asked, only once it shows it ran.
            if runs or (call.decision == "allow" and call.marked_running):
                await self._start(call)
        if text is not None and call.started and text != call.text and not ended:
            delta = text[len(call.text) :] if text.startswith(call.text) else "\n" + text
            call.text = text
            await state.turn.writer.call_output(call.call_id, "stdout", delta)
        if status == "completed" and call.decision != "deny":
            await self._complete(call, text or call.text, update.raw_output)
        elif ended:
            code = "unknown"
            if call.decision == "deny":
                code = "cancelled" if call.withdrawn else "permission_denied"
            await self._fail(call, code, text or call.text or f"the agent reports that {call.title} failed")

    async def _release(self, state: _TurnState, call_id: str) -> AcpCall:
        """Request a held call: its updates merged are its args (the earlier ones kept as sent)."""
        updates = state.held.pop(call_id)
        merged = _merged(updates)
        for sent in updates[:-1]:
            await self._record(sent)
        args = {
            key: value
            for key, value in merged.items()
            if key not in ("sessionUpdate", "toolCallId", "status")
        }
        kind = merged.get("kind")
        risk, reason = self._risk(kind, merged.get("title"), merged.get("rawInput"))
        tool = tool_name_for(kind)
        return await self._open(state, call_id, tool, merged.get("title") or tool, risk, args, reason)

    def _risk(self, kind: str | None, title: Any, raw_input: Any) -> tuple[Risk, str]:
        if (
            tool_name_for(kind) == "execute"
            and command_of(raw_input) is None
            and isinstance(title, str)
            and title.strip()
            and applies(TITLE_IS_COMMAND, self.agent)
        ):
            risk, _ = risk_for(kind, {"command": title})
            return risk, "classified from the command in its title"
        return risk_for(kind, raw_input)

    async def _open(
        self, state: _TurnState, call_id: str, tool: str, title: str, risk: Risk, args: dict[str, Any],
        risk_reason: str | None = None, *, own: bool = False,
    ) -> AcpCall:  # fmt: skip
        """Request a call in the log and keep what ACP adds to the log's record of it."""
        await state.turn.writer.request_call(call_id, tool, args)
        call = AcpCall(self.info.open_calls[call_id], title, risk, args, own=own, risk_reason=risk_reason)
        state.calls[call_id] = call
        return call

    async def _start(self, call: AcpCall) -> None:
        if call.decision is None:  # it did not ask us: its own policy allowed it
            await self._request(call, reason="the agent ran it without asking")
            await self._resolve(
                call, "allow", "policy", policy=f"agent:{self.agent_name}", reason="decided by the agent"
            )
        await self._writer.start_call(call.call_id, call.tool, one_line(call.title))

    async def _complete(self, call: AcpCall, text: str, raw_output: Any) -> None:
        if not call.started:
            await self._start(call)
        await self._completed(call, unfenced(text) or _result_of(raw_output), call.exit_code)

    async def _completed(
        self, call: AcpCall, result: str, exit_code: int | None, truncated: bool = False
    ) -> None:
        """`tool.completed` with at most `RESULT_CHARS` of `result`."""
        self._answered.add(call.call_id)
        truncated = truncated or len(result) > RESULT_CHARS
        await self._writer.complete_call(call.call_id, call.tool, result[:RESULT_CHARS], exit_code, truncated)

    async def _fail(self, call: AcpCall, code: str, message: str) -> None:
        self._answered.add(call.call_id)
        await self._writer.fail_call(call.call_id, call.tool, code, message[:RESULT_CHARS])

    # -- permissions ---------------------------------------------------------------------------
    async def ask_for_agent_call(
        self,
        tool_call: ToolCallUpdate,
        remembered: Callable[[AcpCall], Verdict | None] | None = None,
        options: Sequence[PermissionOption] = (),
    ) -> tuple[AcpCall, Verdict | None] | None:
        """The agent asks about one of its calls: write the request and the policy's `ask`, or
        the answer of our rule that covers it (`remembered(call)`: a session answer).

        Returns the call and that rule's verdict (None: the user is to be asked), or None when
        no turn is open or the call has ended (the question is then kept as a `source.record`;
        an ended call is never requested twice). A call that runs, or was answered, gets a new
        request: every question is in the log before anyone is asked.
        """
        state = self._state
        if state is None:
            return None
        await self._flush_thought()
        await self._executing(state)
        call_id = tool_call.tool_call_id
        call = self.open_call(call_id)
        sent = as_sent(tool_call)
        if call is None and call_id not in self._answered:  # requested with whatever of it was held
            state.held.setdefault(call_id, []).append(sent)
            call = await self._release(state, call_id)
        elif call is not None and not call.started and (tool_call.title or has_input(tool_call.raw_input)):
            await self._record({"sessionUpdate": "request_permission", "toolCall": sent})
            self._reassess(call, tool_call)
        if call is None:  # it ended
            await self._record({"sessionUpdate": "request_permission", "toolCall": sent})
            return None
        offered = [
            {"optionId": o.option_id[:OPTION_CHARS], "name": one_line(o.name, OPTION_CHARS), "kind": o.kind}
            for o in options[:OPTIONS_KEPT]
        ]
        await self._request(call, reason=call.risk_reason, options=offered)
        verdict = remembered(call) if remembered is not None else None
        if verdict is not None:
            decision = verdict.decision
            await self._resolve(call, decision, "policy", policy=verdict.policy, reason=verdict.reason)
            if decision == "allow":
                await self._allowed(call)
            return call, verdict
        await self._resolve(call, "ask", "policy", policy=f"agent:{self.agent_name}", reason="the agent asks")
        return call, None

    def command_of_call(self, call: AcpCall) -> str | None:
        """The command line of the agent's `execute` call: its raw input's, or (for an agent that
        names it there, `TITLE_IS_COMMAND`) its title."""
        if call.own or call.tool != "execute":
            return None
        command = command_of(call.args.get("rawInput"))
        if command is None and call.title.strip() and applies(TITLE_IS_COMMAND, self.agent):
            return call.title
        return command

    def _reassess(self, call: AcpCall, tool_call: ToolCallUpdate) -> None:
        """The question names the call better than its updates did (its title, its input): the
        question is shown, and its risk judged, as the question says."""
        raw_input = tool_call.raw_input if has_input(tool_call.raw_input) else call.args.get("rawInput")
        title = tool_call.title or call.title
        call.risk, call.risk_reason = self._risk(tool_call.kind or call.args.get("kind"), title, raw_input)
        call.title = title
        if has_input(tool_call.raw_input):
            call.args = {**call.args, "rawInput": tool_call.raw_input}

    async def answer(
        self, call: AcpCall, decision: str, actor: str, given: PermissionAnswer, reason: str | None
    ) -> None:
        """Write the final answer to `call`'s question (a no-op if the turn already ended it):
        `decision` by `actor`, for `reason`; when a user gave it, what `given` remembers and who
        answered (`by`, when the answer came over a bus)."""
        if self.open_call(call.call_id) is not call or not call.asking:
            return
        call.withdrawn = actor == "system"
        user = actor == "user"
        remember, by = (given.remember, given.by) if user else (None, None)
        await self._resolve(call, decision, actor, remember=remember, reason=reason, by=by)
        if decision == "allow" and not call.own:
            await self._allowed(call)

    async def _allowed(self, call: AcpCall) -> None:
        self.approvals.note(call.args)
        if call.marked_running and not call.started:  # it said it runs; it does now
            await self._start(call)

    async def own_call(self, tool: str, args: dict[str, Any], risk: Risk, title: str) -> AcpCall | None:
        """A file or terminal request of the agent, as a tool call of ours (None: no turn open)."""
        state = self._state
        if state is None:
            return None
        await self._flush_thought()
        await self._executing(state)
        return await self._open(state, new_id("call"), tool, title, risk, args, own=True)

    async def decide_own(self, call: AcpCall, verdict: Verdict) -> None:
        """The permission pair of one of our own calls as the policy decided it (for an `ask`,
        only the request and the policy's `ask`; `answer` writes the user's decision later)."""
        if call.request_id is None:
            await self._request(call, reason=verdict.reason, warning=verdict.warning)
        reason = (verdict.warning or verdict.reason) if verdict.decision == "ask" else verdict.reason
        await self._resolve(call, verdict.decision, "policy", policy=verdict.policy, reason=reason)

    async def start_own(self, call: AcpCall, preview: str) -> None:
        await self._writer.start_call(call.call_id, call.tool, preview)

    async def output(self, call: AcpCall, stream: str, text: str) -> None:
        if self.open_call(call.call_id) is call and call.started:
            await self._writer.call_output(call.call_id, stream, text)

    async def finish_own(self, call: AcpCall, result: ToolResult) -> None:
        """The end of one of our own calls (a no-op if the turn already answered it)."""
        if self.open_call(call.call_id) is not call:
            return
        if result.ok:
            await self._completed(call, result.text, result.exit_code, result.truncated)
        else:
            await self._fail(call, result.error_code or "unknown", result.text)

    async def _request(
        self,
        call: AcpCall,
        *,
        reason: str | None,
        warning: str | None = None,
        options: Sequence[Mapping[str, str]] | None = None,
    ) -> None:
        if warning is None and call.risk == "destructive" and not call.own:
            warning = f"{call.title}: the agent's call can delete or overwrite data"
        await self._writer.request_permission(
            call.call_id,
            call.tool,
            new_id("perm"),
            call.risk,
            one_line(call.title),
            reason=reason,
            warning=warning,
            options=options,
        )

    async def _resolve(
        self, call: AcpCall, decision: str, actor: str, *, policy: str | None = None,
        reason: str | None = None, remember: str | None = None, by: Mapping[str, str] | None = None,
    ) -> None:  # fmt: skip
        await self._writer.resolve(
            call.call_id, call.request_id, decision, actor, policy=policy, reason=reason, remember=remember,
            by=dict(by) if by else None,
        )  # fmt: skip


def _input_known(held: list[dict[str, Any]]) -> bool:
    """Whether a call's updates so far (as sent) say enough to request it: its input (for an
    `execute` call, its command: opencode first sends only the directory), a status past
    `pending`, or content."""
    last = held[-1]
    if last.get("status") not in (None, "pending") or last.get("content"):
        return True
    merged = _merged(held)
    raw_input = merged.get("rawInput")
    if tool_name_for(merged.get("kind")) == "execute":
        return command_of(raw_input) is not None
    return has_input(raw_input)


def _merged(updates: list[dict[str, Any]]) -> dict[str, Any]:
    """A held call's updates (as sent: no empty fields) as one, a later update's fields winning."""
    return {key: value for sent in updates for key, value in sent.items()}


def _result_of(raw_output: Any) -> str:
    """A result without text content: the text of the raw output, its JSON only when it has none."""
    if raw_output is None:
        return ""
    text = text_of_raw_output(raw_output)
    return text if text is not None else compact_json(raw_output)
