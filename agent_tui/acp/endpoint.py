"""`ClientEndpoint`: the ACP client methods an external agent calls, each handed to its session's
questions or tools.

Invariants:
- session updates are not taken here but off the wire, as they are read (`AcpAgentSession.
  _on_wire`): the SDK may run handlers out of wire order, the log must not;
- every request the protocol lets an agent make of a client with our capabilities (permission,
  files, terminals) is answered; extension methods are "method not found", extension
  notifications are kept as `source.record`s.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from acp import RequestError
from acp.schema import EnvVariable, PermissionOption, RequestPermissionResponse, ToolCallUpdate

from agent_tui.acp.client_tools import ClientTools
from agent_tui.acp.questions import AgentQuestions


class ClientEndpoint:
    """The ACP `Client` the agent talks to: each method hands over to the session's questions or
    its tools; an extension notification goes to `note(method, params)` (kept in the log)."""

    def __init__(
        self, questions: AgentQuestions, tools: ClientTools, note: Callable[[str, dict[str, Any]], None]
    ) -> None:
        self.questions = questions
        self.tools = tools
        self.note = note

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        """Nothing to do: the session takes updates off the wire, in wire order (`_on_wire`)."""

    async def request_permission(
        self, options: list[PermissionOption], session_id: str, tool_call: ToolCallUpdate, **kwargs: Any
    ) -> RequestPermissionResponse:
        return await self.questions.permission(tool_call, options)

    async def read_text_file(
        self, path: str, session_id: str, limit: int | None = None, line: int | None = None, **kwargs: Any
    ) -> Any:
        return await self.tools.read_text_file(path, line, limit)

    async def write_text_file(self, content: str, path: str, session_id: str, **kwargs: Any) -> Any:
        return await self.tools.write_text_file(path, content)

    async def create_terminal(
        self,
        command: str,
        session_id: str,
        args: list[str] | None = None,
        cwd: str | None = None,
        env: list[EnvVariable] | None = None,
        output_byte_limit: int | None = None,
        **kwargs: Any,
    ) -> Any:
        return await self.tools.create_terminal(command, args, env, cwd, output_byte_limit)

    async def terminal_output(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any:
        return await self.tools.terminal_output(terminal_id)

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any:
        return await self.tools.wait_for_terminal_exit(terminal_id)

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any:
        return await self.tools.kill_terminal(terminal_id)

    async def release_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any:
        return await self.tools.release_terminal(terminal_id)

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        self.note(method, {"method": method, "params": params})
