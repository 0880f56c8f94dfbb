"""How dashboard things look as text: glyphs, badges and the lines of a session's transcript.

Every colour here is a theme variable (`$success`, `$warning`, `$error`, `$accent`, …) inside
Textual `Content` styles, so a theme change recolours everything; nothing names a colour.

Every string that comes from a log (names, titles, paths, prompts, what a model or a tool said,
error messages) enters a `Content` through `marked`, so its control characters are markers on the
screen, never commands to the terminal.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

from textual.content import Content

from agent_tui.events import ENDINGS, EndTone, args_preview, counted, is_ours, terminal_cli, terminal_name
from agent_tui.reducer import (
    DashboardState,
    PermissionView,
    SessionView,
    ToolCallView,
    TranscriptEntry,
    TurnView,
)
from agent_tui.tui.agent_plan import mode_line, plan_lines, plan_text_lines
from agent_tui.tui.hanging import hang
from agent_tui.tui.marked import marked
from agent_tui.tui.session_filter import root_of
from agent_tui.tui.spend_text import (
    budget_share,
    budget_text,
    cost_brief,
    cost_words,
    spent,
    tokens_text,
    tree_budget_state,
)
from agent_tui.tui.timing import format_clock, format_duration, oldest_wait, turn_timing, waited_ms

STATUS_GLYPH = {
    "idle": "○",
    "running": "●",
    "completed": "✓",
    "cancelled": "■",
    "failed": "✗",
}
STATUS_STYLE = {
    "idle": "$text-muted",
    "running": "bold $accent",
    "completed": "$success",
    "cancelled": "$warning",
    "failed": "$error",
}
PHASE_STYLE = {
    "start": "$text-secondary",
    "executing": "$text-accent",
    "compress": "$text-warning",
    "end": "$text-muted",
}
RISK_STYLE = {
    "read": "$text-muted",
    "write": "$text-warning",
    "execute": "$text-warning",
    "network": "$text-warning",
    "destructive": "bold $text-error",
}
PATH_SEPARATOR = " › "
OUTPUT_TAIL_LINES = 4
MUTED = "$text-muted"
END_TONE_LOOK: dict[EndTone | None, tuple[str, str]] = {
    "warning": ("■", "$text-warning"),
    "error": ("✗", "bold $text-error"),
    None: ("·", MUTED),
}
"""How the line under a turn looks in each tone of its ending (`Ending.end_tone`)."""


def agent_path_text(path: Iterable[str]) -> str:
    """`lead › explorer › grep-helper`."""
    return PATH_SEPARATOR.join(path)


def terminal_of(session: SessionView | None) -> str | None:
    """`claude` or `codex` for a session Claude Code or Codex ran in the user's own terminal (by
    its `client`), else None. An ACP agent of the config file named `codex` records its own name
    as the session's `agentName` too: that one is not a terminal agent."""
    if session is None or session.agent_name == session.client:
        return None
    return terminal_cli(session.client)


def tree_name(session: SessionView) -> str:
    """A session's name in the tree: a terminal agent's root as `claude · <title>`."""
    name = session.display_name
    if session.parent_session_id is None and terminal_of(session) is not None:
        return terminal_name(session.client, name)
    return name


def session_path(state: DashboardState, session_id: str) -> str:
    """`lead › explorer`, a terminal agent's as `claude · my-proj › Explore`."""
    path = list(state.agent_path(session_id))
    root = state.sessions.get(root_of(state, session_id) or "")
    if path and root is not None and root.parent_session_id is None:
        path[0] = tree_name(root)
    return agent_path_text(path)


def risk_content(risk: str | None) -> Content:
    if not risk:
        return Content.styled("risk ?", MUTED)
    return marked(risk, RISK_STYLE.get(risk, MUTED))


def compact_count(value: int) -> str:
    """1234 → `1.2k`; small numbers as they are."""
    if value >= 10_000:
        return f"{value // 1000}k"
    if value >= 1_000:
        return f"{value / 1000:.1f}k"
    return str(value)


def short_path(path: str | Path) -> str:
    """A path with the home directory written `~` (`/home/ann/src/app` → `~/src/app`)."""
    text = str(path)
    home = os.path.expanduser("~")
    if home not in ("", "/", "~") and (text == home or text.startswith(home + os.sep)):
        return "~" + text[len(home) :]
    return text


def tail_lines(text: str, count: int = OUTPUT_TAIL_LINES) -> list[str]:
    lines = [line.rstrip() for line in text.rstrip("\n").splitlines()]
    return lines[-count:] if len(lines) > count else lines


# -- a session's header and transcript ---------------------------------------------------------


def session_header(state: DashboardState, session: SessionView, now_ms: int | None = None) -> Content:
    """Who the session is, how it is doing, how long its turn has taken, where it runs."""
    turn = session.turns[-1] if session.turns else None
    path = state.agent_path(session.session_id)
    second: list[Content | str | tuple[str, str]] = []
    if len(path) > 1:
        second += [marked(session_path(state, session.session_id), "$text-accent"), (" · ", MUTED)]
    kept = f" · {session.source_records} source-specific" if session.source_records else ""
    second.append(
        marked(
            f"{counted(len(session.turns), 'turn')} · "
            f"{session.event_count} events{kept} · {session.session_id}",
            MUTED,
        )
    )
    lines = [_status_line(session, now_ms), Content.assemble(*second)]
    if turn is not None:
        waiting_since = min(
            (view.asked_ts for view in session.pending.values() if view.turn_id == turn.turn_id),
            default=None,
        )
        timing = turn_timing(turn, now_ms, waiting_since)
        lines.append(Content.styled(f"turn {len(session.turns)} {timing}", MUTED))
    # An ACP agent's own mode and plan (the reducer keeps the latest of each; our agents have none).
    said = mode_line(session.mode_name, session.plan)
    if said is not None:
        lines += [said, *plan_lines(session.plan)]
    lines += plan_text_lines(session.plan_text)
    spend_line = session_spend_line(state, session)
    if spend_line is not None:
        lines.append(spend_line)
    lines.append(_where_line(session))
    return Content("\n").join(lines)


def _status_line(session: SessionView, now_ms: int | None) -> Content:
    """The session's name and status, its turn's phase, step and context, and its open asks."""
    status = session.status
    parts: list[Content | str | tuple[str, str]] = [
        marked(tree_name(session), "bold"),
        "  ",
        (f"{STATUS_GLYPH[status]} {status}", STATUS_STYLE[status]),
    ]
    turn = session.turns[-1] if session.turns else None
    if turn is not None:
        parts += [(" · ", MUTED), (turn.phase, PHASE_STYLE[turn.phase])]
        if turn.step is not None:
            parts += [(" · ", MUTED), f"step {turn.step}"]
        if turn.tokens is not None and turn.max_context_tokens:
            parts += [
                (" · ", MUTED),
                f"{compact_count(turn.tokens)}/{compact_count(turn.max_context_tokens)} tok",
            ]
    if session.pending:
        since = oldest_wait(session, now_ms)
        parts += [(" · ", MUTED), (f"⚑ {len(session.pending)} waiting{since}", "bold $warning")]
    return Content.assemble(*parts)


def _where_line(session: SessionView) -> Content:
    """Where the session works: its directory, its worktree's branch, its model, who wrote it."""
    where: list[Content | str | tuple[str, str]] = []
    if session.cwd:
        where.append(marked(f"cwd {short_path(session.cwd)}", MUTED))
    if session.worktree_branch:
        where += [(" · ", MUTED), marked("⎇ " + session.worktree_branch, "$text-secondary")]
    if session.model:
        where += [(" · ", MUTED), marked(session.model, MUTED)]
    if not is_ours(session.client):
        # Another tool wrote this session: an imported Claude Code or Codex log, or an ACP agent
        # (whose name may be "codex" too, so the line says who, not how).
        where += [(" · ", MUTED), marked(f"via {session.client}", MUTED)]
    return Content.assemble(*where)


def session_spend_line(state: DashboardState, session: SessionView) -> Content | None:
    """`spent $0.42 · 12.3k tok · turn 3 $0.08 · tree $1.87 · budget $2.50, 75% used` (the turn
    part when there were several); near its budget the
    budget part is a warning (`▲ 82% of a $2.50 budget`), past it an error that says what was
    spent of what; None for a session that spent nothing and has no budget."""
    tree = state.tree_spend(session.session_id)
    budget = budget_text(session.budget_usd, session.budget_tokens)
    if not spent(tree) and not budget:
        return None
    parts: list[Content | str | tuple[str, str]] = [
        (f"spent {cost_words(session.spend)}" if spent(session.spend) else "spent nothing yet", MUTED)
    ]
    turn = session.turns[-1] if session.turns else None
    if len(session.turns) > 1 and turn is not None and turn.usage is not None and spent(turn.usage):
        parts += [(" · ", MUTED), (f"turn {len(session.turns)} {cost_brief(turn.usage)}", MUTED)]
    if tree != session.spend:
        parts += [(" · ", MUTED), (f"tree {cost_brief(tree)}", MUTED)]
    if budget:
        share = budget_share(tree, session.budget_usd, session.budget_tokens)
        state_of = tree_budget_state(tree, session.budget_usd, session.budget_tokens)
        parts.append((" · ", MUTED))
        if state_of == "over":
            used = cost_brief(tree) if session.budget_usd is not None else f"{tokens_text(tree.tokens)} tok"
            parts.append((f"▲ over budget: spent {used} of {budget}", "bold $text-error"))
        elif state_of == "near" and share is not None:
            parts.append((f"▲ {int(share * 100)}% of a {budget} budget", "bold $text-warning"))
        else:
            used = f", {int((share or 0) * 100)}% used" if spent(tree) else ""
            parts.append((f"budget {budget}{used}", MUTED))
    return Content.assemble(*parts)


def turn_lines(
    turn: TurnView,
    number: int,
    session: SessionView,
    width: int | None = None,
    now_ms: int | None = None,
    *,
    whole: bool = False,
) -> list[Content]:
    """One turn, line by line: a header rule, then its messages and tool calls in order (a
    message's text may hold line breaks; a view may render each line once and keep it while the
    turn grows).

    Tool lines (arguments, output) are cut to `width` cells with `…` instead of wrapping, so
    a call stays a compact block (`whole`: they wrap, read whole); the user's words wrap; the
    agent's answers are Markdown rendered to `width` (`answer_markdown`).
    """
    lines: list[Content] = [_turn_rule(turn, number, now_ms, dated_clock(session, now_ms))]
    shown: set[str] = set()
    cut = None if whole else width
    for entry in turn.transcript:
        lines += _entry_lines(entry, turn, session, shown, cut, width)
    for call in turn.tool_calls.values():
        if call.call_id not in shown and call.status in ("requested", "asking", "running"):
            lines += tool_call_lines(call, cut)
    ending = ENDINGS.get(turn.stop_reason or "")
    if ending is not None and ending.end_line is not None:
        lines.append(_turn_end_line(turn, ending.end_line, ending.end_tone))
    if turn.end_message:
        tone = ending.end_tone if ending is not None else None
        lines += indented_lines(turn.end_message, "  ", "$text-error" if tone == "error" else MUTED)
    return lines


MESSAGE_LINES = 12
"""The most lines of an error message the detail shows (the rest is counted)."""


def indented_lines(text: str, indent: str, style: str) -> list[Content]:
    """A message of several lines (a traceback, a command's stderr) with every line under the
    first at the same indentation, at most `MESSAGE_LINES` of them."""
    rows = [line.rstrip() for line in text.strip("\n").splitlines()] or [""]
    shown = rows[:MESSAGE_LINES]
    lines = [Content.assemble(indent, marked(row, style)) for row in shown]
    if len(rows) > len(shown):
        lines.append(Content.styled(f"{indent}… {counted(len(rows) - len(shown), 'more line')}", MUTED))
    return lines


def turn_summary(
    turn: TurnView, number: int, now_ms: int | None = None, session: SessionView | None = None
) -> Content:
    """A finished turn in one line: its rule and its prompt."""
    dated = dated_clock(session, now_ms) if session is not None else None
    rule = _turn_rule(turn, number, now_ms, dated)
    return Content.assemble(rule, ("  ", ""), marked(turn.prompt_preview, MUTED))


def dated_clock(session: SessionView, now_ms: int | None) -> bool | None:
    """Whether the session's turn headers say the day (`Dec 10 19:38`) rather than the time
    alone (`19:38:07`): one format for all of them, dated when its first turn is of another day
    than `now_ms` (None: no "now", the time alone)."""
    if now_ms is None or not session.turns or not session.turns[0].started_ts:
        return None
    return format_clock(session.turns[0].started_ts, now_ms) != format_clock(
        session.turns[0].started_ts, now_ms, dated=False
    )


def _turn_rule(turn: TurnView, number: int, now_ms: int | None, dated: bool | None = None) -> Content:
    bits = [f"turn {number}"]
    if turn.stop_reason is None:
        bits.append(turn.phase)
    else:
        bits.append(turn.stop_reason + (f" ({turn.error_code})" if turn.error_code else ""))
    if turn.steps:
        bits.append(f"{counted(turn.steps, 'step')}")
    if turn.usage is not None:
        bits.append(
            f"{compact_count(turn.usage.prompt_tokens)} in / "
            f"{compact_count(turn.usage.completion_tokens)} out"
        )
    elif turn.tokens is not None:
        bits.append(f"{compact_count(turn.tokens)} tok")
    if turn.usage is not None and turn.usage.known_cost_usd is not None and spent(turn.usage):
        bits.append(cost_brief(turn.usage))
    if turn.compactions:
        bits.append(f"compacted ×{turn.compactions}")
    if turn.started_ts:
        bits.append(format_clock(turn.started_ts, now_ms, dated=dated))
    if turn.ended_ts is not None and turn.duration_ms is not None:
        bits.append(format_duration(turn.duration_ms))
    return marked("── " + " · ".join(bits), "$text-muted bold")


def _turn_end_line(turn: TurnView, line: str, tone: EndTone | None) -> Content:
    """The line under a turn that did not end with its answer: its ending's words, its tone's
    glyph and style, and the error code when there is one."""
    glyph, style = END_TONE_LOOK[tone]
    code = f": {turn.error_code}" if turn.error_code else ""
    return marked(f"{glyph} {line}{code}", style)


def _answer_lines(text: str, width: int | None) -> list[Content]:
    """An answer's rows (`answer_markdown`), imported at the first answer shown: Rich's Markdown,
    its parser and the highlighter are a tenth of a second of start-up that a screen with no
    answer on it need not wait for."""
    from agent_tui.tui.answer_markdown import answer_lines

    return answer_lines(text, width)


def _entry_lines(
    message: TranscriptEntry,
    turn: TurnView,
    session: SessionView,
    shown: set[str],
    width: int | None,
    answer_width: int | None = None,
) -> list[Content]:
    role = message.role
    if role == "user":
        label = "❯ (steered) " if message.steered else "❯ "
        return [Content.assemble((label, "bold $text-accent"), marked(message.text, "bold"))]
    if role == "assistant":
        if not message.text:
            return []
        return _answer_lines(message.text, answer_width)
    if role == "note":  # dimmed: an imported log's own record (cut to one line), or a model retry
        note = marked(f"  · {message.text}", "$text-muted italic")
        whole = message.ref in ("model.retry", "turn.rewound")  # why a turn is slow; what a rewind did
        return [note if whole else fit(note, width)]
    if role == "subagent":
        delivery = next((d for d in session.deliveries if d.child_session_id == message.ref), None)
        name = delivery.agent_name if delivery is not None else (message.ref or "sub-agent")
        ok = delivery is None or delivery.status == "completed"
        status = delivery.status if delivery is not None else "delivered"
        # a failed child's text says `failed: CODE (why)`: the status is not said twice
        text = message.text.removeprefix(f"{status}: ")
        return [
            Content.assemble(
                ("↳ ", MUTED),
                marked(name, "bold"),
                " ",
                marked(status, "$text-success" if ok else "$text-error"),
                (": ", MUTED),
                marked(text),
            )
        ]
    call = turn.tool_calls.get(message.ref or "")
    if call is None:
        return [Content.assemble(("  ⚙ ", MUTED), marked(message.text))]
    shown.add(call.call_id)
    return tool_call_lines(call, width)


def fit(content: Content, width: int | None) -> Content:
    """`content` cut to `width` cells with a trailing `…` (unchanged when it fits or no width)."""
    if width is None or content.cell_length <= width:
        return content
    return content.truncate(width, ellipsis=True)


def tool_call_lines(call: ToolCallView, width: int | None = None) -> list[Content]:
    """A tool call as 2+ lines: name and arguments; risk, decision, outcome; output tail."""
    preview = call.args_preview or args_preview(call.args)
    head = Content.assemble(("  ⚙ ", MUTED), marked(call.tool or "tool", "bold"), " ", marked(preview, MUTED))
    lines = [fit(head, width)]
    # No risk: a call from another tool's log (ours is never judged there), or one that failed
    # before it was judged (unknown tool, bad arguments). Nothing to show, rather than "risk ?".
    parts = [risk_content(call.risk)] if call.risk else []
    decision = decision_text(call)
    if decision is not None:
        parts.append(decision)
    outcome = _outcome(call)
    if outcome is not None:
        parts.append(outcome)
    if not parts:
        parts.append(marked(call.status, MUTED))
    lines.append(Content("    ") + Content.styled(" · ", MUTED).join(parts))
    if call.status == "failed" and call.message:
        lines += indented_lines(call.message, "    ", "$text-error")
    body = call.output if call.status == "running" else (call.result or call.output or "")
    for line in tail_lines(body):
        lines.append(fit(Content.assemble(("    │ ", MUTED), marked(line, "$foreground-muted")), width))
    if call.truncated:
        lines.append(Content.styled("    │ (output truncated)", MUTED))
    return lines


def decision_text(call: ToolCallView) -> Content | None:
    """`allowed by policy`, `denied by you`, `waiting for approval`, …"""
    if call.status == "asking":
        return Content.styled("⚑ waiting for approval", "bold $text-warning")
    final = next((d for d in reversed(call.decisions) if d[0] != "ask"), None)
    if final is None:
        return None
    decision, actor = final
    if decision == "withdrawn":  # a terminal agent's CLI took the question back
        return marked(f"↩ {call.answer_reason or 'withdrawn'}", "$text-warning")
    who = {"user": "you", "policy": "policy", "system": "system"}.get(actor, actor)
    if actor == "user" and call.answer_reason and call.answer_reason.startswith("--approve"):
        who = "--approve"  # the headless runner answered for the user
    asked = any(d[0] == "ask" for d in call.decisions)
    if decision == "allow":
        text = f"allowed by {who}" + (" (asked)" if asked and actor != "user" else "")
        return marked(text, "$text-success")
    return marked(f"denied by {who}", "$text-error")


def _outcome(call: ToolCallView) -> Content | None:
    if call.status == "running":
        return Content.styled("running…", "$text-accent")
    if call.status == "completed":
        if call.exit_code is None:
            return Content.styled("done", "$text-success")
        style = "$text-success" if call.exit_code == 0 else "$text-error"
        return Content.styled(f"exit {call.exit_code}", style)
    if call.status in ("failed", "denied") and call.error_code and call.error_code != "permission_denied":
        return marked(f"✗ {call.error_code}", "$text-error")
    return None


# -- the approval queue ------------------------------------------------------------------------


WRITE_PREVIEW_LINES = 3
"""A `write_file` entry in the queue shows this many lines of the content, spaces kept."""


def approval_prompt(
    state: DashboardState,
    view: PermissionView,
    number: int,
    now_ms: int | None = None,
    width: int | None = None,
    where: str | None = None,
) -> Content:
    """A queue entry: agent path (and `where`: the host it runs on, for an attached dashboard);
    tool, risk, how long it has waited; arguments; a warning.

    The lines after the first start under the agent path, and with `width` every line is
    wrapped to it with its continuation rows under its text. A `write_file` shows the first
    lines of its content as they are (the one-line preview squeezes their indentation).
    """
    waited = waited_ms(view.asked_ts, now_ms)
    head = Content.assemble(
        (f"{number}. ", MUTED),
        marked(session_path(state, view.session_id), "bold"),
        (" on ", MUTED) if where else ("", ""),
        marked(where or "", "bold"),
        ("  ", ""),
        marked(view.tool, "bold $text-accent"),
        (" · ", MUTED),
        risk_content(view.risk),
        (f" · {format_duration(waited)}", MUTED) if waited is not None else ("", ""),
    )
    indent = " " * len(f"{number}. ")
    write = _written_file(state, view)
    body: list[Content] = []
    if write is None:
        body.append(marked(view.args_preview or "(no arguments)", "$foreground-muted"))
    else:
        path, content = write
        body.append(marked(f"path={json.dumps(path, ensure_ascii=False)}", "$foreground-muted"))
        written = content.splitlines() or [""]
        room = None if width is None else width - len(indent)
        for line in written[:WRITE_PREVIEW_LINES]:
            body.append(fit(Content.assemble(("│ ", MUTED), marked(line, "$foreground-muted")), room))
        if len(written) > WRITE_PREVIEW_LINES:
            body.append(
                Content.styled(f"│ … {counted(len(written) - WRITE_PREVIEW_LINES, 'more line')}", MUTED)
            )
    if view.risk == "destructive" or view.reason:
        warning = view.reason or "destructive: it can delete or overwrite data"
        style = "$text-error" if view.risk == "destructive" else "$text-warning"
        body.append(marked("⚠ " + warning, style))
    lines = [head, *(Content(indent) + line for line in body)]
    if width is not None:
        lines = [row for line in lines for row in hang(line, width)]
    return Content("\n").join(lines)


def call_of(state: DashboardState, view: PermissionView) -> ToolCallView | None:
    """The tool call a request asks about, if the state holds it."""
    session = state.sessions.get(view.session_id)
    if session is not None:
        for turn in reversed(session.turns):
            if turn.turn_id == view.turn_id:
                return turn.tool_calls.get(view.tool_call_id)
    return None


def _written_file(state: DashboardState, view: PermissionView) -> tuple[str, str] | None:
    """A `write_file` request's path and content, if the state has the call's arguments."""
    call = call_of(state, view) if view.tool == "write_file" else None
    args = call.args if call is not None else {}
    path, content = args.get("path"), args.get("content")
    return (path, content) if isinstance(path, str) and isinstance(content, str) else None
