"""For any interleaving of a CLI's transcript lines and its hook events (tool calls announced,
questions answered, withdrawn or handed back, stops, turn ends), the log keeps its chains, and a
later process that reads the same transcript continues it without a warning."""

from __future__ import annotations

import tempfile
from pathlib import Path

import anyio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_terminal_logs import MAIN, FakeClaude, Harness, new_engine, stored

from agent_tui.engine.permissions import PermissionAnswer
from agent_tui.events.chains import chain_violations

ACTIONS = st.sampled_from(
    [
        "line",
        "line",
        "line",
        "pre",
        "ask_allow",
        "ask_deny",
        "ask_hangup",
        "ask_codex",
        "ask_terminal",
        "stop",
        "x",
        "prompt",
        "end",
    ]
)


async def _ask(h: Harness, how: str) -> None:
    """A PermissionRequest, answered as `how` says once it waits (if it ever does)."""
    engine = h.engine
    finished = anyio.Event()

    async def permission() -> None:
        try:
            await h.hooks.handle(
                "codex" if how == "ask_codex" else "claude-code", h.cli.edit_hook("PermissionRequest")
            )
        finally:
            finished.set()

    async with anyio.create_task_group() as group:
        group.start_soon(permission)
        while not finished.is_set():
            waiting = engine.questions.waiting()
            if waiting:
                if how == "ask_terminal":  # answered in the terminal: the transcript moves on first
                    h.cli.write(min(h.cli.written + 3, 11))
                    await h.logs.catch_up()
                if how in ("ask_hangup", "ask_terminal"):
                    group.cancel_scope.cancel()
                    break
                if how != "ask_codex":
                    answer = PermissionAnswer("allow" if how == "ask_allow" else "deny")
                    engine.questions.answer(waiting[0].session_id, waiting[0].request_id, answer)
            await anyio.sleep(0.001)


async def _play(root: Path, first: int, actions: list[str]) -> None:
    cli = FakeClaude(root)
    cli.write(first)  # the prompt at least: the session exists
    async with new_engine(root) as engine:
        h = Harness(engine, cli, hand_back=0.01)
        await h.hooks.handle("claude-code", cli.hook("SessionStart"))
        for action in actions:
            if action == "line":
                cli.write(min(cli.written + 1, 11))
                await h.logs.catch_up()
            elif action == "pre":
                await h.hooks.handle("claude-code", cli.edit_hook("PreToolUse"))
            elif action.startswith("ask"):
                await _ask(h, action)
            elif action == "stop":
                await h.hooks.handle("claude-code", cli.hook("Stop"))
            elif action == "x":
                await h.hooks.stop(MAIN)
            elif action == "session_end":  # then any hook event follows the session again
                await h.hooks.handle("claude-code", cli.hook("SessionEnd"))
            elif action == "prompt":
                await h.hooks.handle("claude-code", cli.hook("UserPromptSubmit"))
            elif action == "end":
                break
        assert h.logs.warnings == []
        h.logs.release()
    assert chain_violations(stored(root, MAIN), complete=False) == []
    written = stored(root, MAIN)
    cli.write(11)
    async with new_engine(root) as engine:
        again = Harness(engine, cli)
        await again.hooks.handle("claude-code", cli.hook("SessionEnd"))
        assert again.logs.warnings == []
        again.logs.release()
    events = stored(root, MAIN)
    assert [e.id for e in events[: len(written)]] == [e.id for e in written]
    assert chain_violations(events) == []


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(2, 8), st.lists(ACTIONS, max_size=16))
def test_any_interleaving_keeps_the_chains(first: int, actions: list[str]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        anyio.run(_play, Path(folder), first, actions)
