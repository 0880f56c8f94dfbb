"""`ClientTools`: the ACP client an external agent talks to; its file and terminal requests run
as our own tool calls.

`fs/read_text_file` is our `read_file`, `fs/write_text_file` our `write_file`, and a terminal
(`terminal/create`, then `output`, `wait_for_exit`, `kill`, `release`) our `shell`: the same
tools, under the same path rules (nothing outside the session's directory), through the same
permission policy and the same approval queue as the calls of our own agents.

Invariants:
- each request is one tool call in the session's log with its whole chain: requested, the
  permission pair (the policy's verdict, or its `ask` and the user's answer), started, output,
  completed or failed; arguments that do not fit the tool fail without a permission question;
- a request the user already allowed through the agent's own question (the same file in the
  call's locations or input, the same command) is not asked about again (`policy: agent:<name>`);
- a denied or failed request answers the agent with a JSON-RPC error saying why;
- a terminal runs in the background; when its turn ends, every terminal still running is killed
  (its process group), and its call ends `cancelled`;
- output kept for `terminal/output` honours the agent's byte limit, cutting from the start at a
  character boundary;
- session updates are not taken here but off the wire, as they are read (`AcpAgentSession.
  _on_wire`): the SDK may run handlers out of wire order, the log must not; a permission
  question goes to the session's `AgentQuestions`;
- every request the protocol lets an agent make of a client with our capabilities (permission,
  files, terminals) is answered; extension methods are "method not found", extension
  notifications are kept as `source.record`s.
"""

from __future__ import annotations

import contextlib
import shlex
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from acp import RequestError
from acp.schema import (
    CreateTerminalResponse,
    EnvVariable,
    KillTerminalResponse,
    PermissionOption,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    RequestPermissionResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    ToolCallUpdate,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)

from agent_tui.acp.acp_call import AcpCall
from agent_tui.acp.agent_process import signal_name
from agent_tui.acp.questions import AgentQuestions
from agent_tui.acp.session_side import SessionSide
from agent_tui.engine.clock import new_id
from agent_tui.engine.permissions import PermissionRulesError, Verdict
from agent_tui.engine.tools.base import ToolContext, ToolError, ToolResult
from agent_tui.engine.tools.builtin import builtin_tools
from agent_tui.engine.tools.paths import resolve_under
from agent_tui.engine.tools.router import ToolRouter
from agent_tui.events.model import Risk

OUTPUT_BUDGET = 1_000_000
"""Characters of a file or a terminal's output an agent can get in one piece."""
TERMINAL_TIMEOUT_MS = 3_600_000
"""A terminal is killed after an hour (our shell tool's longest timeout)."""


@dataclass(eq=False)
class _Terminal:
    terminal_id: str
    call: AcpCall
    byte_limit: int | None
    output: str = ""
    truncated: bool = False
    exit_code: int | None = None
    signal: str | None = None
    done: anyio.Event = field(default_factory=anyio.Event)
    scope: anyio.CancelScope | None = None
    killed_by: str | None = None

    def append(self, text: str) -> None:
        self.output += text
        limit = self.byte_limit
        if limit is not None:
            data = self.output.encode("utf-8")
            if len(data) > limit:
                self.output = data[len(data) - limit :].decode("utf-8", "ignore")
                self.truncated = True

    def exit_status(self) -> TerminalExitStatus | None:
        if not self.done.is_set():
            return None
        return TerminalExitStatus(exit_code=self.exit_code, signal=self.signal)


class ClientTools:
    """The ACP `Client` of one ACP-backed session (see the module docstring). Its methods take
    what the SDK hands over (`session_id` is the agent's session, which is ours)."""

    def __init__(self, session: SessionSide, questions: AgentQuestions) -> None:
        self.session = session
        self.questions = questions
        tools = [tool for tool in builtin_tools() if tool.name in ("read_file", "write_file", "shell")]
        self.router = ToolRouter(tools, output_budget=OUTPUT_BUDGET)
        self._terminals: dict[str, _Terminal] = {}

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        """Nothing to do: the session takes updates off the wire, in wire order (`_on_wire`)."""

    async def request_permission(
        self, options: list[PermissionOption], session_id: str, tool_call: ToolCallUpdate, **kwargs: Any
    ) -> RequestPermissionResponse:
        return await self.questions.permission(tool_call, options)

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        recorder = self.session.recorder
        await self.session.write(lambda: recorder.note(method, {"method": method, "params": params}))

    # -- files ---------------------------------------------------------------------------------
    async def read_text_file(
        self, path: str, session_id: str, limit: int | None = None, line: int | None = None, **kwargs: Any
    ) -> ReadTextFileResponse:
        args: dict[str, Any] = {"path": path}
        if line is not None:
            args["offset"] = line
        if limit is not None:
            args["limit"] = limit
        result = await self._call("read_file", args, f"read {path}")
        return ReadTextFileResponse(content=result.text)

    async def write_text_file(
        self, content: str, path: str, session_id: str, **kwargs: Any
    ) -> WriteTextFileResponse:
        await self._call("write_file", {"path": path, "content": content}, f"write {path}")
        return WriteTextFileResponse()

    async def _call(self, tool_name: str, args: dict[str, Any], title: str) -> ToolResult:
        session = self.session
        call, tool, parsed = await self._request(tool_name, args, title, args)
        if not await self._permit(call, args):
            raise _denied(call)
        await session.write(lambda: session.recorder.start_own(call, title))
        result = await self.router.run(tool, parsed, self._context(call, session.cwd, self._output_of(call)))
        await self._finish(call, result)
        if not result.ok:
            raise RequestError.internal_error({"details": result.text, "errorCode": result.error_code})
        return result

    # -- terminals -----------------------------------------------------------------------------
    async def create_terminal(
        self,
        command: str,
        session_id: str,
        args: list[str] | None = None,
        cwd: str | None = None,
        env: list[EnvVariable] | None = None,
        output_byte_limit: int | None = None,
        **kwargs: Any,
    ) -> CreateTerminalResponse:
        session = self.session
        cmd = shlex.join([command, *args]) if args else command
        if env:
            cmd = "env " + " ".join(shlex.quote(f"{item.name}={item.value}") for item in env) + " " + cmd
        shell_args: dict[str, Any] = {"cmd": cmd, "timeoutMs": TERMINAL_TIMEOUT_MS}
        logged = shell_args if cwd is None else {**shell_args, "cwd": cwd}
        title = f"terminal: {cmd}" + (f" (in {cwd})" if cwd else "")
        unsafe: ToolError | None = None
        try:
            workdir = resolve_under(session.cwd, cwd, must_exist=True) if cwd else session.cwd
        except ToolError as error:
            workdir, unsafe = session.cwd, error
        # judged where it runs: the paths a read names are resolved from there
        call, tool, parsed = await self._request("shell", shell_args, title, logged, cwd=workdir)
        if unsafe is not None:
            await self._finish(call, ToolResult.failure(unsafe.code, unsafe.message))
            raise RequestError.invalid_params({"details": unsafe.message}) from None
        if not await self._permit(call, shell_args):
            raise _denied(call)
        terminal = _Terminal(new_id("term"), call, output_byte_limit)
        self._terminals[terminal.terminal_id] = terminal
        await session.write(lambda: session.recorder.start_own(call, cmd))
        session.spawn(self._run_terminal, terminal, tool, parsed, workdir)
        return CreateTerminalResponse(terminal_id=terminal.terminal_id)

    async def _run_terminal(self, terminal: _Terminal, tool: Any, parsed: Any, workdir: Path) -> None:
        call = terminal.call
        output = self._output_of(call, terminal.append)
        result: ToolResult | None = None
        try:
            with anyio.CancelScope() as scope:
                terminal.scope = scope
                result = await self.router.run(tool, parsed, self._context(call, workdir, output))
        finally:
            terminal.scope = None
            with anyio.CancelScope(shield=True):
                if result is None:
                    terminal.signal = "SIGKILL"
                    why = terminal.killed_by or "the turn ended"
                    result = ToolResult.failure("cancelled", f"the terminal was killed ({why})")
                elif result.exit_code is not None and result.exit_code < 0:
                    terminal.signal = signal_name(-result.exit_code)
                else:
                    terminal.exit_code = result.exit_code
                await self._finish(call, result)
                terminal.done.set()

    def _terminal(self, terminal_id: str) -> _Terminal:
        terminal = self._terminals.get(terminal_id)
        if terminal is None:
            raise RequestError.invalid_params({"details": f"no terminal {terminal_id}"})
        return terminal

    async def terminal_output(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> TerminalOutputResponse:
        terminal = self._terminal(terminal_id)
        return TerminalOutputResponse(
            output=terminal.output, truncated=terminal.truncated, exit_status=terminal.exit_status()
        )

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> WaitForTerminalExitResponse:
        terminal = self._terminal(terminal_id)
        await terminal.done.wait()
        return WaitForTerminalExitResponse(exit_code=terminal.exit_code, signal=terminal.signal)

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> KillTerminalResponse:
        await self._kill(self._terminal(terminal_id), "the agent killed it")
        return KillTerminalResponse()

    async def release_terminal(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> ReleaseTerminalResponse:
        terminal = self._terminal(terminal_id)
        await self._kill(terminal, "the agent released it")
        self._terminals.pop(terminal_id, None)
        return ReleaseTerminalResponse()

    async def _kill(self, terminal: _Terminal, why: str) -> None:
        if terminal.scope is not None and not terminal.done.is_set():
            terminal.killed_by = why
            terminal.scope.cancel()
        await terminal.done.wait()

    async def stop_all(self, why: str) -> None:
        """Kill every terminal still running (a turn ends) and wait until each has ended."""
        for terminal in list(self._terminals.values()):
            await self._kill(terminal, why)

    # -- shared steps --------------------------------------------------------------------------
    async def _request(
        self,
        tool_name: str,
        args: dict[str, Any],
        title: str,
        logged: dict[str, Any],
        *,
        cwd: Path | None = None,
    ) -> tuple[AcpCall, Any, Any]:
        """Write the request; a call whose arguments do not fit fails at once (no question).
        `cwd`: where a shell command runs, so it is judged as our own shell's are there."""
        session = self.session
        tool: Any = None
        parsed: Any = None
        risk: Risk = "read"
        failure: ToolError | None = None
        try:
            tool, parsed = self.router.parse(tool_name, args)
            risk = self.router.assess(tool_name, parsed, cwd=cwd).risk
        except ToolError as error:
            failure = error
        call = await session.write(lambda: session.recorder.own_call(tool_name, logged, risk, title))
        if call is None:
            raise RequestError.invalid_request({"details": "no prompt is running in this session"})
        if failure is not None:
            await self._finish(call, ToolResult.failure(failure.code, failure.message))
            raise RequestError.invalid_params({"details": failure.message})
        return call, tool, parsed

    async def _finish(self, call: AcpCall, result: ToolResult) -> None:
        recorder = self.session.recorder
        await self.session.write(lambda: recorder.finish_own(call, result))

    async def _permit(self, call: AcpCall, args: dict[str, Any]) -> bool:
        """Decide like our engine does (policy, then the queue); True when allowed. A denied
        call is answered in the log (`tool.failed{permission_denied}`) before this returns."""
        allowed = await self._decide(call, args)
        if not allowed:
            await self._finish(
                call, ToolResult.failure("permission_denied", f"{call.tool} was denied permission")
            )
        return allowed

    async def _decide(self, call: AcpCall, args: dict[str, Any]) -> bool:
        session = self.session
        recorder = session.recorder
        permissions = session.permissions
        protected = permissions.protected_change(call.tool, args, call.risk, session.cwd)
        try:
            verdict = permissions.evaluate(
                session.session_id, call.tool, args, call.risk, protected=protected
            )
        except PermissionRulesError as error:
            verdict = Verdict("deny", "rules", reason=str(error))
        if verdict.decision == "ask":
            approved = self._approved(call, args)
            if approved is not None:
                verdict = Verdict("allow", f"agent:{session.name}", reason=approved)
        await session.write(lambda: recorder.decide_own(call, verdict))
        if verdict.decision != "ask":
            return verdict.decision == "allow"
        answer, actor = await self.questions.ask_user(call, args, verdict.warning)
        await session.write(lambda: recorder.answer(call, answer.decision, actor, answer, answer.reason))
        if actor == "user":
            # the answer still counts for this call; the rules file is reported elsewhere
            with contextlib.suppress(PermissionRulesError):
                permissions.remember(session.session_id, call.tool, args, call.risk, answer)
        return answer.decision == "allow"

    def _approved(self, call: AcpCall, args: dict[str, Any]) -> str | None:
        approvals = self.session.recorder.approvals
        if call.tool == "write_file" and approvals.covers_path(str(args.get("path", ""))):
            return "the user allowed the agent's call that writes this file"
        if call.tool == "shell" and approvals.covers_command(str(args.get("cmd", ""))):
            return "the user allowed the agent's call that runs this command"
        return None

    def _context(self, call: AcpCall, cwd: Path, on_output: Any) -> ToolContext:
        session = self.session
        turn = session.recorder.turn
        return self.router.make_context(
            cwd=cwd,
            session_id=session.session_id,
            turn_id=turn.turn_id if turn is not None else "",
            tool_call_id=call.call_id,
            on_output=on_output,
        )

    def _output_of(
        self, call: AcpCall, keep: Callable[[str], None] | None = None
    ) -> Callable[[Any, str], Awaitable[None]]:
        session = self.session

        async def on_output(stream: Any, text: str) -> None:
            if keep is not None:
                keep(text)
            await session.write(lambda: session.recorder.output(call, stream, text))

        return on_output


def _denied(call: AcpCall) -> RequestError:
    return RequestError.internal_error(
        {
            "details": f"permission denied: the user did not allow {call.title}",
            "errorCode": "permission_denied",
        }
    )
