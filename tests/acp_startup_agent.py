"""The test agent (`acp_test_agent.py`) with start-up behaviours of the real agents, for the tests
of starting, stopping and reopening an ACP agent.

Run as `python tests/acp_startup_agent.py [--hang-initialize-while FILE]
[--hang-new-session-while FILE] [--needs-login] [--no-load-session]`:

- `--hang-initialize-while FILE`, `--hang-new-session-while FILE`: while FILE exists (when the
  request comes), it never answers `initialize`, or `session/new`;
- `--needs-login`: offers two `authMethods` and refuses `session/new` with ACP's auth-required
  error (-32000), as Gemini CLI does without a key; once the file named by `$TEST_AGENT_LOGIN`
  exists, it takes the session (the user logged in);
- `--no-load-session`: says `loadSession: false` (opencode-like agents without `session/load`);
- `--modes`: `session/new` answers with two modes (`ask`, the current one, and `code`);
- the prompt `plan`: sends a plan of three entries and switches to mode `code`, then ends the
  turn; `plan text` sends a plan as markdown (`plan_update`), `no plan` removes the plan
  (`plan_removed`); `until cancelled` says one chunk and answers `cancelled` once it hears
  `session/cancel`; other prompts behave as in the test agent.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

from acp import (
    InitializeResponse,
    NewSessionResponse,
    PromptResponse,
    RequestError,
    plan_entry,
    run_agent,
    update_agent_message_text,
    update_plan,
)
from acp.schema import (
    AgentPlanContentUpdate,
    AgentPlanRemovedUpdate,
    AuthMethodAgent,
    ClientCapabilities,
    CurrentModeUpdate,
    Implementation,
    PlanUpdateMarkdown,
    SessionMode,
    SessionModeState,
)
from acp_test_agent import PLAN_ID, TestAgent


class StartupAgent(TestAgent):
    def __init__(self, argv: list[str]) -> None:
        super().__init__(hang_initialize=False, protocol=1)
        self.hang_initialize_while = _flag_value("--hang-initialize-while", argv)
        self.hang_new_session_while = _flag_value("--hang-new-session-while", argv)
        self.needs_login = "--needs-login" in argv
        self.no_load_session = "--no-load-session" in argv
        self.modes = "--modes" in argv

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        if self.hang_initialize_while and os.path.exists(self.hang_initialize_while):
            await self.forever.wait()
        answer = await super().initialize(protocol_version, client_capabilities, client_info, **kwargs)
        if self.no_load_session and answer.agent_capabilities is not None:
            answer.agent_capabilities.load_session = False
        if self.needs_login:
            answer.auth_methods = [
                AuthMethodAgent(
                    id="browser", name="Log in with a browser", description="run `test-agent login` once"
                ),
                AuthMethodAgent(id="key", name="Use an API key", description="set TEST_AGENT_API_KEY"),
            ]
        return answer

    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[Any] | None = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        if self.hang_new_session_while and os.path.exists(self.hang_new_session_while):
            await self.forever.wait()
        login = os.environ.get("TEST_AGENT_LOGIN", "")
        if self.needs_login and not (login and os.path.exists(login)):
            raise RequestError.auth_required({"details": "no credentials"})
        answer = await super().new_session(cwd, additional_directories, mcp_servers, **kwargs)
        if self.modes:
            answer.modes = SessionModeState(
                current_mode_id="ask",
                available_modes=[
                    SessionMode(id="ask", name="Ask first"),
                    SessionMode(id="code", name="Code"),
                ],
            )
        return answer

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        await super().cancel(session_id, **kwargs)
        heard = getattr(self, "cancel_heard", None)
        if heard is not None:
            heard.set()

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        text = "".join(getattr(block, "text", "") for block in prompt)
        plan_id: dict[str, Any] = {PLAN_ID: "p1"}
        if text == "plan text":
            plan = PlanUpdateMarkdown(type="markdown", content="# Plan", **plan_id)
            update = AgentPlanContentUpdate(session_update="plan_update", plan=plan)
            await self._conn.session_update(session_id=session_id, update=update)
            return PromptResponse(stop_reason="end_turn")
        if text == "until cancelled":
            self.cancel_heard = asyncio.Event()
            said = update_agent_message_text("working")
            await self._conn.session_update(session_id=session_id, update=said)
            await self.cancel_heard.wait()
            return PromptResponse(stop_reason="cancelled")
        if text == "no plan":
            removed = AgentPlanRemovedUpdate(session_update="plan_removed", **plan_id)
            await self._conn.session_update(session_id=session_id, update=removed)
            return PromptResponse(stop_reason="end_turn")
        if text != "plan":
            return await super().prompt(session_id, prompt, **kwargs)
        entries = [
            plan_entry("read the file", status="completed", priority="high"),
            plan_entry("edit it", status="in_progress"),
            plan_entry("run the tests", priority="low"),
        ]
        await self._conn.session_update(session_id=session_id, update=update_plan(entries))
        await self._conn.session_update(
            session_id=session_id,
            update=CurrentModeUpdate(session_update="current_mode_update", current_mode_id="code"),
        )
        return PromptResponse(stop_reason="end_turn")


def _flag_value(flag: str, argv: list[str]) -> str | None:
    return argv[argv.index(flag) + 1] if flag in argv else None


if __name__ == "__main__":
    asyncio.run(run_agent(StartupAgent(sys.argv[1:])))  # type: ignore[abstract]
