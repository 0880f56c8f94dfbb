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
- prompts behave as in the test agent.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

from acp import InitializeResponse, NewSessionResponse, RequestError, run_agent
from acp.schema import AuthMethodAgent, ClientCapabilities, Implementation
from acp_test_agent import TestAgent


class StartupAgent(TestAgent):
    def __init__(self, argv: list[str]) -> None:
        super().__init__(hang_initialize=False, protocol=1)
        self.hang_initialize_while = _flag_value("--hang-initialize-while", argv)
        self.hang_new_session_while = _flag_value("--hang-new-session-while", argv)
        self.needs_login = "--needs-login" in argv
        self.no_load_session = "--no-load-session" in argv

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

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        if self.hang_new_session_while and os.path.exists(self.hang_new_session_while):
            await self.forever.wait()
        login = os.environ.get("TEST_AGENT_LOGIN", "")
        if self.needs_login and not (login and os.path.exists(login)):
            raise RequestError.auth_required({"details": "no credentials"})
        return await super().new_session(cwd, **kwargs)


def _flag_value(flag: str, argv: list[str]) -> str | None:
    return argv[argv.index(flag) + 1] if flag in argv else None


if __name__ == "__main__":
    asyncio.run(run_agent(StartupAgent(sys.argv[1:])))  # type: ignore[abstract]
