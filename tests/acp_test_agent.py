"""A small ACP agent in the shape of the SDK's own examples, for the client's tests.

Run as `python tests/acp_test_agent.py [--hang-initialize] [--protocol N] [--name NAME]
[--version V] [--session-id ID]` (`--name`/`--version`: the `agentInfo` it answers `initialize`
with, to play a known agent; `--session-id`: the id its `session/new` answers). What a prompt does depends on its text:

- `script JSON`: plays a list of steps in the order given, as real agents send them: `{"send":
  UPDATE}` sends a session update as it is on the wire, `{"say": TEXT}` a message chunk,
  `{"ask": TOOL_CALL, "options": [...], "allowed": [STEPS], "denied": [STEPS]}` asks
  permission (default options: Yes `allow_once`, Always `allow_always`, No `reject_once`),
  says `told OPTION` (or `told cancelled`) and plays the steps of the answer's family,
  `{"usage": USAGE}` is the usage its prompt answer reports, and `{"stop": REASON}` ends the
  prompt with that stop reason (else `end_turn`);

- `every update`: sends each kind of session update the protocol has, a tool call through all
  its statuses (with text, diff and terminal content), asks permission with its own options,
  reads and writes files and runs a terminal through the client, then ends the turn;
- `crash`: writes a line to stderr and exits with status 3;
- `garbage`: writes a line that is not JSON-RPC to stdout, then waits;
- `deep N`: writes a JSON-RPC notification whose params nest N arrays deep, then waits;
- `huge input`: a tool call whose raw input holds an integer past 64 bits;
- `ignore cancel`: streams one chunk, then never answers (not even a cancel);
- `terminal: CMD`: runs `sh -c CMD` in a client terminal and says its exit code and output;
  `program: PROGRAM ARG…` runs the program itself with those arguments (split at spaces);
- `spawn child`: starts `sleep 600` in its process group and says its pid, then ends the turn;
- `ask late`: runs a tool call to its end, then asks permission for that same call;
- `mcp servers`: says, as JSON, the `mcpServers` it was given in `session/new`;
- anything else: echoes the prompt back and ends the turn.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from typing import Any

from acp import (
    PROTOCOL_VERSION,
    Agent,
    InitializeResponse,
    NewSessionResponse,
    PromptResponse,
    RequestError,
    plan_entry,
    run_agent,
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    tool_terminal_ref,
    update_agent_message_text,
    update_agent_thought_text,
    update_plan,
    update_tool_call,
    update_user_message_text,
)
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    AgentPlanContentUpdate,
    AgentPlanRemovedUpdate,
    AvailableCommand,
    AvailableCommandsUpdate,
    ClientCapabilities,
    ConfigOptionUpdate,
    CurrentModeUpdate,
    Implementation,
    LoadSessionResponse,
    McpCapabilities,
    PermissionOption,
    PlanUpdateMarkdown,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionInfoUpdate,
    SessionNotification,
    ToolCallLocation,
    ToolCallUpdate,
    Usage,
    UsageUpdate,
)

# The (unstable) plan updates name their id `planId` from schema 1.19 on, `id` before.
PLAN_ID = "plan_id" if "plan_id" in PlanUpdateMarkdown.model_fields else "id"


class TestAgent(Agent):
    _conn: Client

    def __init__(
        self, *, hang_initialize: bool, protocol: int, name: str = "test-agent", version: str = "1.0"
    ) -> None:
        self.hang_initialize = hang_initialize
        self.protocol = protocol
        self.name = name
        self.version = version
        self.usage: Usage | None = None  # what a script's prompt answer reports
        self.capabilities: ClientCapabilities | None = None
        self.mcp_servers: list[dict[str, Any]] = []
        self.forever = asyncio.Event()
        self.late_replay = ""  # `--late-replay ANSWER`: a load's history goes on after its answer
        self.replaying = ""
        self.session_id = "test-session-1"  # `--session-id ID`: the id `session/new` answers

    def on_connect(self, conn: Client) -> None:
        self._conn = conn

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        if self.hang_initialize:
            await self.forever.wait()
        self.capabilities = client_capabilities
        return InitializeResponse(
            protocol_version=self.protocol,
            agent_capabilities=AgentCapabilities(
                load_session=True, mcp_capabilities=McpCapabilities(http=True)
            ),
            agent_info=Implementation(name=self.name, version=self.version),
        )

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: list[Any] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> LoadSessionResponse:
        self.cwd = cwd
        say = self._conn.session_update
        await say(session_id=session_id, update=update_user_message_text("(an earlier prompt)"))
        if self.late_replay:  # as Gemini CLI does: the rest of the history after the answer
            await say(session_id=session_id, update=update_user_message_text("<session_context>"))
            self.replaying = self.late_replay
            return LoadSessionResponse()
        await say(session_id=session_id, update=update_agent_message_text("(an earlier answer)"))
        return LoadSessionResponse()

    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[Any] | None = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        self.cwd = cwd
        self.mcp_servers = [server.model_dump(mode="json", exclude_none=True) for server in mcp_servers or ()]
        return NewSessionResponse(session_id=self.session_id)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        self.cancelled = True

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        text = "".join(getattr(block, "text", "") for block in prompt)
        say = self._conn.session_update
        if self.replaying:  # the loaded history's answer, in two pieces, after our prompt came
            earlier, self.replaying = self.replaying, ""
            half = len(earlier) // 2
            for piece in (earlier[:half], earlier[half:]):
                await say(session_id=session_id, update=update_agent_message_text(piece))
        if text == "crash":
            sys.stderr.write("fatal: out of cheese\n")
            sys.stderr.flush()
            os._exit(3)
        if text.startswith("deep "):
            depth = int(text.split()[1])
            nested = "[" * depth + "]" * depth
            line = '{"jsonrpc":"2.0","method":"session/update","params":{"x":' + nested + "}}\n"
            sys.stdout.buffer.write(line.encode())
            sys.stdout.buffer.flush()
            await self.forever.wait()
        if text == "garbage":
            sys.stdout.buffer.write(b"this is not json\n")
            sys.stdout.buffer.flush()
            await self.forever.wait()
        if text.startswith("script "):
            self.usage = None
            stop = await self._script(session_id, json.loads(text.removeprefix("script ")))
            return PromptResponse(stop_reason=stop, usage=self.usage)  # type: ignore[arg-type]
        if text == "ignore cancel":
            await say(session_id=session_id, update=update_agent_message_text("working on it"))
            await self.forever.wait()
        if text == "mcp servers":
            await say(session_id=session_id, update=update_agent_message_text(json.dumps(self.mcp_servers)))
            return PromptResponse(stop_reason="end_turn")
        if text == "spawn child":
            child = subprocess.Popen(["sleep", "600"])
            await say(session_id=session_id, update=update_agent_message_text(f"child {child.pid}"))
            return PromptResponse(stop_reason="end_turn")
        if text.startswith("terminal: "):
            await self._terminal(session_id, "sh", ["-c", text.removeprefix("terminal: ")])
            return PromptResponse(stop_reason="end_turn")
        if text.startswith("program: "):
            program, *args = text.removeprefix("program: ").split()
            await self._terminal(session_id, program, args)
            return PromptResponse(stop_reason="end_turn")
        if text == "ask late":
            await say(session_id=session_id, update=start_tool_call("t1", "List files", kind="read"))
            await say(session_id=session_id, update=update_tool_call("t1", status="completed"))
            options = [PermissionOption(option_id="yes", name="Yes", kind="allow_once")]
            await self._conn.request_permission(
                session_id=session_id, tool_call=update_tool_call("t1", title="List files"), options=options
            )
            await say(session_id=session_id, update=update_agent_message_text("done"))
            return PromptResponse(stop_reason="end_turn")
        if text == "ask running":
            # It marks its call running, then asks about it; it says what it was told.
            await say(session_id=session_id, update=start_tool_call("t1", "Run make", kind="execute"))
            await say(session_id=session_id, update=update_tool_call("t1", status="in_progress"))
            options = [
                PermissionOption(option_id="yes", name="Yes", kind="allow_once"),
                PermissionOption(option_id="no", name="No", kind="reject_once"),
            ]
            answer = await self._conn.request_permission(
                session_id=session_id, tool_call=update_tool_call("t1", title="Run make"), options=options
            )
            chosen = getattr(answer.outcome, "option_id", None) or "cancelled"
            await say(session_id=session_id, update=update_tool_call("t1", status="completed"))
            await say(session_id=session_id, update=update_agent_message_text(f"told {chosen}"))
            return PromptResponse(stop_reason="end_turn")
        if text == "huge input":
            raw = {"count": 10**23}
            await say(
                session_id=session_id, update=start_tool_call("t1", "Count", kind="read", raw_input=raw)
            )
            await say(session_id=session_id, update=update_tool_call("t1", status="completed"))
            await say(session_id=session_id, update=update_agent_message_text("counted"))
            return PromptResponse(stop_reason="end_turn")
        if text == "every update":
            await self._every_update(session_id)
            return PromptResponse(stop_reason="end_turn")
        await say(session_id=session_id, update=update_agent_message_text(f"echo: {text}"))
        return PromptResponse(stop_reason="end_turn")

    async def _script(self, session_id: str, steps: list[dict[str, Any]]) -> str:
        """Play `steps` (see the module docstring); the stop reason the prompt ends with."""
        say = self._conn.session_update
        for step in steps:
            if "send" in step:
                sent = SessionNotification.model_validate({"sessionId": session_id, "update": step["send"]})
                await say(session_id=session_id, update=sent.update)
            elif "say" in step:
                await say(session_id=session_id, update=update_agent_message_text(step["say"]))
            elif "ask" in step:
                options = [PermissionOption.model_validate(option) for option in step.get("options", ASKED)]
                answer = await self._conn.request_permission(
                    session_id=session_id,
                    tool_call=ToolCallUpdate.model_validate(step["ask"]),
                    options=options,
                )
                chosen = getattr(answer.outcome, "option_id", None)
                kind = next((option.kind for option in options if option.option_id == chosen), "")
                await say(
                    session_id=session_id, update=update_agent_message_text(f"told {chosen or 'cancelled'}")
                )
                stop = await self._script(
                    session_id, step.get("allowed" if kind.startswith("allow") else "denied", [])
                )
                if stop != "end_turn":
                    return stop
            elif "usage" in step:
                self.usage = Usage.model_validate(step["usage"])
            elif "stop" in step:
                return str(step["stop"])
        return "end_turn"

    async def _terminal(self, session_id: str, command: str, args: list[str]) -> None:
        try:
            terminal = await self._conn.create_terminal(session_id=session_id, command=command, args=args)
        except RequestError as error:
            await self._conn.session_update(
                session_id=session_id, update=update_agent_message_text(f"refused: {error.data}")
            )
            return
        status = await self._conn.wait_for_terminal_exit(
            session_id=session_id, terminal_id=terminal.terminal_id
        )
        output = await self._conn.terminal_output(session_id=session_id, terminal_id=terminal.terminal_id)
        await self._conn.release_terminal(session_id=session_id, terminal_id=terminal.terminal_id)
        said = f"exit {status.exit_code}: {output.output}"
        await self._conn.session_update(session_id=session_id, update=update_agent_message_text(said))

    async def _every_update(self, session_id: str) -> None:
        say = self._conn.session_update
        await say(session_id=session_id, update=update_user_message_text("every update"))
        await say(
            session_id=session_id, update=UsageUpdate(session_update="usage_update", used=1200, size=200000)
        )
        await say(session_id=session_id, update=update_agent_thought_text("Let me "))
        await say(session_id=session_id, update=update_agent_thought_text("think."))
        plan_id: dict[str, Any] = {PLAN_ID: "p1"}  # the field's name differs across ACP versions
        await say(
            session_id=session_id, update=update_plan([plan_entry("read the file"), plan_entry("edit it")])
        )
        await say(
            session_id=session_id,
            update=AgentPlanContentUpdate(
                session_update="plan_update",
                plan=PlanUpdateMarkdown(type="markdown", content="# Plan", **plan_id),
            ),
        )
        await say(
            session_id=session_id,
            update=AgentPlanRemovedUpdate(session_update="plan_removed", **plan_id),
        )
        await say(
            session_id=session_id,
            update=AvailableCommandsUpdate(
                session_update="available_commands_update",
                available_commands=[AvailableCommand(name="review", description="Review the changes")],
            ),
        )
        await say(
            session_id=session_id,
            update=CurrentModeUpdate(session_update="current_mode_update", current_mode_id="code"),
        )
        await say(
            session_id=session_id,
            update=ConfigOptionUpdate(
                session_update="config_option_update",
                config_options=[
                    SessionConfigOptionSelect(
                        type="select",
                        id="model",
                        name="Model",
                        current_value="small",
                        options=[SessionConfigSelectOption(value="small", name="Small")],
                    )
                ],
            ),
        )
        await say(
            session_id=session_id,
            update=SessionInfoUpdate(session_update="session_info_update", title="Every update"),
        )
        await say(session_id=session_id, update=update_agent_message_text("Reading "))
        await say(session_id=session_id, update=update_agent_message_text("the file."))

        # A tool call the agent runs on its own: pending → in_progress (text) → completed.
        await say(
            session_id=session_id,
            update=start_tool_call(
                "t1", "List files", kind="execute", status="pending", raw_input={"command": "ls -la"}
            ),
        )
        await say(
            session_id=session_id,
            update=update_tool_call(
                "t1", status="in_progress", content=[tool_content(text_block("a.txt\n"))]
            ),
        )
        await say(
            session_id=session_id,
            update=update_tool_call(
                "t1",
                status="completed",
                content=[tool_content(text_block("a.txt\nb.txt\n"))],
                raw_output={"exitCode": 0},
            ),
        )

        # An edit it asks about first, with its own options; the answer decides how it ends.
        path = os.path.join(self.cwd, "a.txt")
        edit = start_tool_call(
            "t2",
            "Edit a.txt",
            kind="edit",
            status="pending",
            locations=[ToolCallLocation(path=path)],
            raw_input={"path": path, "content": "new\n"},
        )
        await say(session_id=session_id, update=edit)
        options = [
            PermissionOption(option_id="yes", name="Yes", kind="allow_once"),
            PermissionOption(option_id="always", name="Always", kind="allow_always"),
            PermissionOption(option_id="no", name="No", kind="reject_once"),
        ]
        tool_call = update_tool_call("t2", title="Edit a.txt", kind="edit", status="pending")
        answer = await self._conn.request_permission(
            session_id=session_id, tool_call=tool_call, options=options
        )
        allowed = getattr(answer.outcome, "option_id", None) in ("yes", "always")
        if allowed:
            await say(session_id=session_id, update=update_tool_call("t2", status="in_progress"))
            before = await self._conn.read_text_file(session_id=session_id, path=path)
            await self._conn.write_text_file(session_id=session_id, path=path, content="new\n")
            await say(
                session_id=session_id,
                update=update_tool_call(
                    "t2", status="completed", content=[tool_diff_content(path, "new\n", before.content)]
                ),
            )
        else:
            await say(session_id=session_id, update=update_tool_call("t2", status="failed"))

        # A path outside the session's directory is refused by the client.
        try:
            await self._conn.read_text_file(session_id=session_id, path="/etc/hostname")
            escaped = "read outside"
        except RequestError as error:
            escaped = f"refused: {error.data}"
        await say(session_id=session_id, update=update_agent_message_text(f" {escaped}."))

        # A terminal: its output and exit code come back from the client.
        await say(
            session_id=session_id, update=start_tool_call("t3", "Run echo", kind="execute", status="pending")
        )
        terminal = await self._conn.create_terminal(
            session_id=session_id, command="echo", args=["hello", "terminal"]
        )
        await say(
            session_id=session_id,
            update=update_tool_call(
                "t3", status="in_progress", content=[tool_terminal_ref(terminal.terminal_id)]
            ),
        )
        exit_status = await self._conn.wait_for_terminal_exit(
            session_id=session_id, terminal_id=terminal.terminal_id
        )
        output = await self._conn.terminal_output(session_id=session_id, terminal_id=terminal.terminal_id)
        await self._conn.release_terminal(session_id=session_id, terminal_id=terminal.terminal_id)
        await say(
            session_id=session_id,
            update=update_tool_call(
                "t3",
                status="completed",
                content=[tool_content(text_block(output.output))],
                raw_output={"exitCode": exit_status.exit_code},
            ),
        )
        await say(session_id=session_id, update=update_agent_message_text(" Done."))


ASKED = [
    {"optionId": "yes", "name": "Yes", "kind": "allow_once"},
    {"optionId": "always", "name": "Always", "kind": "allow_always"},
    {"optionId": "no", "name": "No", "kind": "reject_once"},
]
"""The options a script's question offers unless it names its own."""


def _flag(argv: list[str], name: str, default: str) -> str:
    return argv[argv.index(name) + 1] if name in argv else default


async def main(argv: list[str]) -> None:
    protocol = int(_flag(argv, "--protocol", str(PROTOCOL_VERSION)))
    hang = "--hang-initialize" in argv
    agent = TestAgent(  # type: ignore[abstract]
        hang_initialize=hang,
        protocol=protocol,
        name=_flag(argv, "--name", "test-agent"),
        version=_flag(argv, "--version", "1.0"),
    )
    agent.late_replay = _flag(argv, "--late-replay", "")
    agent.session_id = _flag(argv, "--session-id", agent.session_id)
    # The test agent answers only the calls the tests make (no authenticate, modes, ...).
    await run_agent(agent)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
