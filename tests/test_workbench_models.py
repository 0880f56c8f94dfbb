"""The workbench with real model adapters: the OpenAI and Anthropic providers, built as the CLI
builds them, stream from a loopback server that speaks their wire formats (`fake_model_server`).

A user starts an agent from `n`, sees its first words, follows up on it (the server receives the
whole conversation), and picks another model profile in the form (the other vendor's endpoint is
the one called, and the log says which model the session runs on).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_model_server import FakeModelServer, Stream, anthropic_stream, openai_stream
from support_providers import fake_model_server, provider_for  # noqa: F401 - the `server` fixture
from support_tui import detail_text, log_of
from support_workbench import type_text, wait_for
from textual.widgets import Input, Select

from agent_tui.runtime.model_router import ModelChoice
from agent_tui.tui.app import AgentTuiApp
from agent_tui.tui.screens.new_agent import NewAgentScreen

pytestmark = pytest.mark.anyio


def choices(server: FakeModelServer) -> list[ModelChoice]:
    return [
        ModelChoice(
            "gpt",
            "openai · test-model",
            build=lambda: provider_for("openai", server.openai_url),
            provider="openai",
            model="test-model",
        ),
        ModelChoice(
            "claude",
            "anthropic · claude-test",
            build=lambda: provider_for("anthropic", server.anthropic_url),
            provider="anthropic",
            model="claude-test",
        ),
    ]


def make_app(tmp_path: Path, server: FakeModelServer) -> AgentTuiApp:
    project = tmp_path / "project"
    project.mkdir()
    (project / "AGENTS.md").write_text("Run the tests with make test.\n")
    return AgentTuiApp(sessions_dir=tmp_path / "sessions", project=project, models=choices(server))


def session(app: AgentTuiApp, name: str):
    assert app.live is not None
    return next((s for s in app.live.state.sessions.values() if s.display_name == name), None)


async def start_from_the_form(
    pilot, app: AgentTuiApp, prompt: str, name: str, model: str | None = None
) -> None:
    assert app.live is not None
    live = app.live
    await wait_for(pilot, lambda: live.workbench is not None, "the engine")
    await pilot.press("n")
    form = app.screen
    assert isinstance(form, NewAgentScreen)
    await type_text(pilot, prompt, newline="enter")
    form.query_one("#new-agent-name", Input).value = name
    if model is not None:
        form.query_one("#new-agent-model", Select).focus()
        await pilot.press("enter", "down", "enter")  # open the list, the next entry, choose it
        assert form.query_one("#new-agent-model", Select).value == model
    await pilot.press("ctrl+s")


class TestRealAdapters:
    async def test_an_agent_from_n_streams_its_first_words_from_the_model(
        self, tmp_path: Path, server: FakeModelServer
    ) -> None:
        server.script(Stream(openai_stream(["Hello", " from the model."])))
        app = make_app(tmp_path, server)
        async with app.run_test(size=(120, 40)) as pilot:
            await start_from_the_form(pilot, app, "Say hello.", "greeter")
            await wait_for(
                pilot,
                lambda: (s := session(app, "greeter")) is not None and s.status == "completed",
                "the turn",
            )
            greeter = session(app, "greeter")
            events = log_of(app, greeter.session_id)
            assert next(e["payload"]["text"] for e in events if e["type"] == "model.delta") == "Hello"
            assert (
                events[0]["payload"]["provider"] == "openai" and events[0]["payload"]["model"] == "test-model"
            )
            await wait_for(
                pilot, lambda: "Hello from the model." in detail_text(app), "the words in the detail"
            )
            sent = server.requests[0].body["messages"]
            assert sent[0]["role"] == "system" and "Run the tests with make test." in sent[0]["content"]
            assert sent[-1] == {"role": "user", "content": "Say hello."}
            await pilot.press("q")

    async def test_a_follow_up_sends_the_whole_conversation(
        self, tmp_path: Path, server: FakeModelServer
    ) -> None:
        server.script(Stream(openai_stream(["First answer."])), Stream(openai_stream(["Second answer."])))
        app = make_app(tmp_path, server)
        async with app.run_test(size=(120, 40)) as pilot:
            await start_from_the_form(pilot, app, "First question?", "asker")
            await wait_for(
                pilot, lambda: (s := session(app, "asker")) is not None and s.status == "completed", "turn 1"
            )
            await pilot.press("i")
            await type_text(pilot, "Second question?")
            await pilot.press("enter")
            await wait_for(
                pilot,
                lambda: len(session(app, "asker").turns) == 2 and session(app, "asker").status == "completed",
                "turn 2",
            )
            second = [(m["role"], m["content"]) for m in server.requests[1].body["messages"][1:]]
            assert second == [
                ("user", "First question?"),
                ("assistant", "First answer."),
                ("user", "Second question?"),
            ]
            await pilot.press("q")

    async def test_the_form_picks_another_profile(self, tmp_path: Path, server: FakeModelServer) -> None:
        server.script(Stream(anthropic_stream(["Claude here."])))
        app = make_app(tmp_path, server)
        async with app.run_test(size=(120, 40)) as pilot:
            await start_from_the_form(pilot, app, "Who are you?", "second", model="claude")
            await wait_for(
                pilot,
                lambda: (s := session(app, "second")) is not None and s.status == "completed",
                "the turn",
            )
            assert [request.path for request in server.requests] == ["/v1/messages"]
            created = log_of(app, session(app, "second").session_id)[0]["payload"]
            assert (created["provider"], created["model"]) == ("anthropic", "claude-test")
            await pilot.press("q")
