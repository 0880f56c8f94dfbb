"""Helpers for the ACP tests: a wire validator, a test answerer, and a client harness.

`WireValidator` is handed to the connection as an observer, so it sees every JSON-RPC message in
both directions. Each is parsed into the SDK's own schema model for its method (a response by
the method of the request it answers), and must come out of the model unchanged: the SDK's
models quietly replace some invalid values with defaults, and the round trip catches that.
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
from acp import schema
from acp.connection import StreamDirection, StreamEvent
from pydantic import BaseModel

from agent_tui.acp.agents import AcpAgents
from agent_tui.acp.config import AcpAgentConfig
from agent_tui.engine.engine import SessionEngine
from agent_tui.engine.permissions import PermissionAnswer, PermissionRequest
from agent_tui.engine.questions import Questions
from agent_tui.engine.scripted import ScriptedProvider
from agent_tui.events import Event
from agent_tui.store import JsonlFileEventStore

TEST_AGENT = Path(__file__).with_name("acp_test_agent.py")

# method → (params model, result model or None for a notification)
METHODS: dict[str, tuple[type[BaseModel], type[BaseModel] | None]] = {
    "initialize": (schema.InitializeRequest, schema.InitializeResponse),
    "authenticate": (schema.AuthenticateRequest, schema.AuthenticateResponse),
    "session/new": (schema.NewSessionRequest, schema.NewSessionResponse),
    "session/load": (schema.LoadSessionRequest, schema.LoadSessionResponse),
    "session/prompt": (schema.PromptRequest, schema.PromptResponse),
    "session/cancel": (schema.CancelNotification, None),
    "session/update": (schema.SessionNotification, None),
    "session/request_permission": (schema.RequestPermissionRequest, schema.RequestPermissionResponse),
    "fs/read_text_file": (schema.ReadTextFileRequest, schema.ReadTextFileResponse),
    "fs/write_text_file": (schema.WriteTextFileRequest, schema.WriteTextFileResponse),
    "terminal/create": (schema.CreateTerminalRequest, schema.CreateTerminalResponse),
    "terminal/output": (schema.TerminalOutputRequest, schema.TerminalOutputResponse),
    "terminal/wait_for_exit": (schema.WaitForTerminalExitRequest, schema.WaitForTerminalExitResponse),
    "terminal/kill": (schema.KillTerminalRequest, schema.KillTerminalResponse),
    "terminal/release": (schema.ReleaseTerminalRequest, schema.ReleaseTerminalResponse),
}


class WireValidator:
    """An observer that checks every message against the SDK's schema (see the module docstring)."""

    def __init__(self) -> None:
        self.problems: list[str] = []
        self.methods: Counter[str] = Counter()
        self.updates: Counter[str] = Counter()
        self.errors: list[dict[str, Any]] = []
        self._pending: dict[tuple[StreamDirection, Any], str] = {}

    def __call__(self, event: StreamEvent) -> None:
        message = event.message
        if message.get("jsonrpc") != "2.0":
            self.problems.append(f"not JSON-RPC 2.0: {message}")
        method = message.get("method")
        if method is not None:
            self._request(event.direction, message, method)
        else:
            self._response(event.direction, message)

    def _request(self, direction: StreamDirection, message: dict[str, Any], method: str) -> None:
        self.methods[method] += 1
        models = METHODS.get(method)
        if models is None:
            self.problems.append(f"unknown method {method}")
            return
        params_model, result_model = models
        if "id" in message:
            if result_model is None:
                self.problems.append(f"{method} is a notification but came with an id")
            self._pending[(direction, message["id"])] = method
        elif result_model is not None:
            self.problems.append(f"{method} is a request but came without an id")
        parsed = self._check(method, params_model, message.get("params"))
        if method == "session/update" and parsed is not None:
            self.updates[parsed.update.session_update] += 1  # type: ignore[attr-defined]

    def _response(self, direction: StreamDirection, message: dict[str, Any]) -> None:
        asked = (
            StreamDirection.INCOMING if direction is StreamDirection.OUTGOING else StreamDirection.OUTGOING
        )
        method = self._pending.pop((asked, message.get("id")), None)
        if method is None:
            self.problems.append(f"a response to no request: {message}")
            return
        if "error" in message:
            error = message["error"]
            if not isinstance(error.get("code"), int) or not isinstance(error.get("message"), str):
                self.problems.append(f"{method}: malformed error {error}")
            self.errors.append({"method": method, **error})
            return
        result_model = METHODS[method][1]
        assert result_model is not None
        self._check(f"{method} result", result_model, message.get("result"))

    def _check(self, what: str, model: type[BaseModel], data: Any) -> BaseModel | None:
        try:
            parsed = model.model_validate(data)
        except Exception as error:
            self.problems.append(f"{what}: {error}")
            return None
        again = parsed.model_dump(mode="json", by_alias=True, exclude_unset=True)
        if _without_none(again) != _without_none(data):
            self.problems.append(f"{what}: does not survive the schema unchanged: {data} → {again}")
        return parsed

    @property
    def pending(self) -> list[str]:
        return list(self._pending.values())


def _without_none(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _without_none(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [_without_none(item) for item in value]
    return value


class QueuePrompter:
    """An answerer for tests (`Questions(prompter.ask)`): records each request, then answers with `decide(request)`.

    `decide` returning None leaves the request waiting (until the turn withdraws it). `asked`
    is set each time a request arrives; `withdrawn` counts requests cancelled while waiting.
    """

    def __init__(self, decide: Callable[[PermissionRequest], PermissionAnswer | None]) -> None:
        self.decide = decide
        self.requests: list[PermissionRequest] = []
        self.asked = anyio.Event()
        self.withdrawn = 0

    async def ask(self, request: PermissionRequest) -> PermissionAnswer:
        self.requests.append(request)
        self.asked.set()
        answer = self.decide(request)
        if answer is not None:
            return answer
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            self.withdrawn += 1
            raise
        raise AssertionError("unreachable")


class EventWatch:
    """An engine listener: keeps every event and wakes waiters on the types they wait for."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self._waiters: list[tuple[Callable[[Event], bool], anyio.Event]] = []

    def __call__(self, event: Event) -> None:
        self.events.append(event)
        for test, flag in list(self._waiters):
            if test(event):
                flag.set()

    async def wait_for(self, test: Callable[[Event], bool]) -> Event:
        for event in self.events:
            if test(event):
                return event
        flag = anyio.Event()
        self._waiters.append((test, flag))
        await flag.wait()
        return next(event for event in reversed(self.events) if test(event))


def server_config(scenario: Path, sessions_dir: Path) -> AcpAgentConfig:
    """`agent-tui acp --scenario FILE` as an external agent, started the way a user's config would."""
    args = ("-m", "agent_tui", "acp", "--scenario", str(scenario), "--sessions-dir", str(sessions_dir))
    return AcpAgentConfig("agent-tui", sys.executable, args, env=PASS_ON)


def script_agent_config(*extra: str) -> AcpAgentConfig:
    return AcpAgentConfig("test-agent", sys.executable, (str(TEST_AGENT), *extra), env=PASS_ON)


PASS_ON = tuple(name for name in ("PYTHONPATH",) if name in os.environ)
"""Agents started by the tests import the same packages as the tests (when PYTHONPATH is set)."""


class Harness:
    """An engine with a log directory, a watch on its events, and `AcpAgents` on it."""

    def __init__(self, sessions_dir: Path, prompter: Any, **agents_options: Any) -> None:
        self.store = JsonlFileEventStore(sessions_dir)
        self.validator = WireValidator()
        self.watch = EventWatch()
        self.engine = SessionEngine(
            self.store,
            ScriptedProvider(),
            questions=Questions(prompter.ask) if prompter is not None else None,
        )
        self.engine.subscribe(self.watch)
        observers = [self.validator, *agents_options.pop("observers", ())]
        self.agents = AcpAgents(self.engine, observers=observers, **agents_options)

    async def __aenter__(self) -> Harness:
        await self.engine.__aenter__()
        await self.agents.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        try:
            await self.agents.__aexit__(*exc)
        finally:
            await self.engine.__aexit__(*exc)
            self.store.close()

    def log(self, session_id: str) -> list[Event]:
        return list(self.store.replay(session_id))
