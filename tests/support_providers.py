"""Builders for the provider tests: settings pointed at the fake server, quick retries, one-turn runs."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from fake_model_server import FakeModelServer
from support_engine import make_engine

from agent_tui.engine.provider import ModelMessage, ModelProvider, ModelRequest, ProviderFailure
from agent_tui.engine.questions import Questions, fixed_answer
from agent_tui.events import Event
from agent_tui.providers.config import DEFAULT_KEY_ENV, ModelSettings
from agent_tui.providers.factory import build_provider
from agent_tui.providers.retry import RetryPolicy
from agent_tui.runtime.prompt_run import PromptResult, PromptRun
from agent_tui.store import JsonlEventLog

# A key no server issues, distinctive enough that finding it anywhere means it leaked.
FAKE_KEY = "sk-test-Zq8sW3cXv9LpR4tYk2NdQe7M"
# Retries as many as the real policy would do in spirit, but with waits of a millisecond.
FAST = RetryPolicy(retries=2, base_delay_s=0.001, max_delay_s=0.004, connect_timeout_s=5, read_timeout_s=10)


@pytest.fixture(name="server")
def fake_model_server() -> Iterator[FakeModelServer]:
    """`server`: the fake model server on loopback, for one test (import this to use it)."""
    with FakeModelServer() as running:
        yield running


def settings_for(
    vendor: str, base_url: str, *, model: str = "test-model", max_output: int = 1024
) -> ModelSettings:
    return ModelSettings(
        provider=vendor,
        model=model,
        base_url=base_url,
        api_key_env=DEFAULT_KEY_ENV[vendor],
        context_window=100_000,
        max_output_tokens=max_output,
        temperature=None,
        profile=None,
        sources={},
    )


def provider_for(vendor: str, base_url: str, *, policy: RetryPolicy = FAST) -> ModelProvider:
    return build_provider(settings_for(vendor, base_url), {DEFAULT_KEY_ENV[vendor]: FAKE_KEY}, policy=policy)


def request(*messages: ModelMessage, tools: tuple[dict[str, Any], ...] = ()) -> ModelRequest:
    messages = messages or (ModelMessage("system", "be brief"), ModelMessage("user", "hello"))
    return ModelRequest("sess_t", "turn_t", 1, tuple(messages), tools)


async def chunks(
    provider: ModelProvider, req: ModelRequest | None = None
) -> tuple[list[Any], ProviderFailure | None]:
    """Everything one call streams, and the failure that ended it (None: it ended normally)."""
    out: list[Any] = []
    try:
        async for chunk in provider.stream(req or request()):
            out.append(chunk)
    except ProviderFailure as failure:
        return out, failure
    return out, None


def project(tmp_path: Path) -> Path:
    """A small real project the agent works in."""
    cwd = tmp_path / "project"
    (cwd / "src").mkdir(parents=True)
    (cwd / "README.md").write_text("# demo\n")
    (cwd / "src" / "app.py").write_text("print('hi')\n")
    return cwd


def prompt_run(
    tmp_path: Path,
    vendor: str,
    base_url: str,
    *,
    approve: str = "deny",
    max_steps: int = 250,
) -> PromptRun:
    return PromptRun(
        settings_for(vendor, base_url),
        prompt="What is in this project?",
        cwd=project(tmp_path) if not (tmp_path / "project").exists() else tmp_path / "project",
        sessions_dir=tmp_path / "sessions",
        questions=Questions(fixed_answer("allow" if approve == "allow" else "deny")),
        env={DEFAULT_KEY_ENV[vendor]: FAKE_KEY},
        policy=FAST,
        max_steps=max_steps,
    )


def play(run: PromptRun, on_event: Callable[[Event], None] | None = None) -> tuple[PromptResult, list[Event]]:
    """Run the turn to its end; returns how it ended and the root session's log as stored."""
    if on_event is not None:
        run.subscribe(on_event)
    try:
        result = anyio.run(run.play)
    finally:
        run.close()
    assert result.session_id is not None
    return result, stored_events(run.store.root, result.session_id)


async def cancel_on_first_delta(
    server: FakeModelServer, vendor: str, base_url: str, tmp_path: Path
) -> tuple[list[Event], bool]:
    """Run a turn on the real engine and cancel it when the first delta is stored.

    Returns the session's stored log and whether the server saw the connection close within 1 s,
    waited for before the provider's HTTP client is closed.
    """
    provider = provider_for(vendor, base_url)
    engine = make_engine(tmp_path, provider)
    try:
        async with engine:
            session_id = await engine.create_session(project(tmp_path))

            def on_event(event: Event) -> None:
                if event.type == "model.delta":
                    engine.cancel_turn(session_id)

            engine.subscribe(on_event)
            async for _ in engine.run_turn(session_id, "go"):
                pass
            saw_close = await anyio.to_thread.run_sync(server.disconnected.wait, 1.0)
    finally:
        await provider.aclose()  # type: ignore[attr-defined]
    return stored_events(tmp_path / "sessions", session_id), saw_close


def stored_events(sessions_dir: Path, session_id: str) -> list[Event]:
    return list(JsonlEventLog(sessions_dir / f"{session_id}.jsonl").replay("strict"))


def clean_env(**extra: str) -> dict[str, str]:
    """The environment for a subprocess: no keys, settings or config of the person running the tests."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("AGENT_TUI_", "OPENAI_", "ANTHROPIC_"))
    }
    env.update(extra)
    return env


def agent_tui(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """The real command in a subprocess (`env`: its whole environment; None: the tests' own)."""
    return subprocess.run(
        [sys.executable, "-m", "agent_tui", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=120,
    )
