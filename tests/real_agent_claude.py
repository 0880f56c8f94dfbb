"""The real-agent adapter for Claude Code through its ACP adapter (`claude-agent-acp`).

`claude-agent-acp` runs Claude Code (the native CLI that `@anthropic-ai/claude-agent-sdk` ships)
as a child process; both read the Anthropic Messages API settings from the environment:

- `ANTHROPIC_BASE_URL` (the fake model's root; the CLI posts to `/v1/messages`) and
  `ANTHROPIC_API_KEY` (any string: the fake model does not check it);
- `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC`, `DISABLE_AUTOUPDATER`, `DISABLE_TELEMETRY`,
  `DISABLE_ERROR_REPORTING`: no update checks, telemetry or error reports leave the machine;
- `IS_SANDBOX`: run as root (CI is), Claude Code refuses the mode that skips permissions and the
  adapter leaves it out of its modes; `IS_SANDBOX=1` makes root get what a user gets. The session
  starts in the default mode ("Manual"), which asks before every shell command.

Its settings live in `$HOME/.claude` (the isolated home); `setup` writes a settings file that
names the default mode, so nothing else decides it. It needs no `authenticate`: the key in the
environment is its login (it says so in an `_auth/status_update` notification).

Invariants:
- every request of the agent's main loop carries its tools (`Bash` among them); anything else it
  sends (a session title, a guess at the user's next prompt, a token count) is a side request,
  answered by a route with a short text so the main script stays in order;
- a shell call is the `Bash` tool with `command` (and the `description` Claude Code's model gives).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fake_model_server import Body, FakeModelServer, Recorded, Stream, anthropic_stream
from support_real_agents import AgentSetup, standard_config

NAME = "claude"

MAIN_TOOL = "Bash"
CALL_ID = "toolu_fake0001"
"""The id of the `tool_use` block `shell_call` scripts (the ACP tool call's id too)."""


def is_main(recorded: Recorded) -> bool:
    """A request of the agent's own loop (it offers the model its tools, `Bash` among them)."""
    body = recorded.body
    if recorded.method != "POST" or not recorded.path.startswith("/v1/messages"):
        return False
    if recorded.path.startswith("/v1/messages/count_tokens"):
        return False
    tools = body.get("tools") if isinstance(body, dict) else None
    offers_shell = any(isinstance(tool, dict) and tool.get("name") == MAIN_TOOL for tool in tools or ())
    return offers_shell and not _is_suggestion(recorded)


def _is_suggestion(recorded: Recorded) -> bool:
    """Claude Code's guess at the user's next prompt, asked after a turn with the main loop's
    tools and history: a side request."""
    return any(
        block.get("type") == "text" and block.get("text", "").startswith("[SUGGESTION MODE")
        for block in _last_user_blocks(recorded)
    )


def _is_count(recorded: Recorded) -> bool:
    return recorded.path.startswith("/v1/messages/count_tokens")


def _is_side(recorded: Recorded) -> bool:
    return not is_main(recorded) and not _is_count(recorded)


def setup(home: Path, model: FakeModelServer) -> AgentSetup:
    claude = home / ".claude"
    claude.mkdir(parents=True, exist_ok=True)
    settings: dict[str, Any] = {"permissions": {"defaultMode": "default"}}
    (claude / "settings.json").write_text(json.dumps(settings, indent=2))
    _route_side_requests(model)
    env = {
        "ANTHROPIC_BASE_URL": model.anthropic_url,
        "ANTHROPIC_API_KEY": "sk-ant-fake-test-key",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "IS_SANDBOX": "1",
    }
    return standard_config(NAME, env)


def _route_side_requests(model: FakeModelServer) -> None:
    """Side requests get an answer every time they come (a route's replies are used up in order,
    so it holds many)."""
    model.route(_is_count, *[Body({"input_tokens": 42}) for _ in range(200)])
    model.route(_is_side, *[Stream(anthropic_stream(["Shell check"])) for _ in range(200)])


def _last_user_blocks(recorded: Recorded) -> list[dict[str, Any]]:
    users = [m for m in recorded.body.get("messages", []) if m.get("role") == "user"]
    if not users:
        return []
    content = users[-1]["content"]
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def _says_something(block: dict[str, Any]) -> bool:
    """A text block a person wrote (not a reminder or an interruption note Claude Code adds)."""
    text = block.get("text", "") if block.get("type") == "text" else ""
    return bool(text) and not text.startswith(("<system-reminder>", "[Request interrupted"))


def _answers(call_id: str) -> Callable[[Recorded], bool]:
    """Picks the main request that brings the result of the tool call `call_id` (and no prompt)."""

    def when(recorded: Recorded) -> bool:
        blocks = _last_user_blocks(recorded)
        return (
            is_main(recorded)
            and any(b.get("type") == "tool_result" and b.get("tool_use_id") == call_id for b in blocks)
            and not any(_says_something(block) for block in blocks)
        )

    return when


def _prompted(recorded: Recorded) -> bool:
    """Picks a main request that starts a turn: its last user message says something (after a
    stop it also carries the stopped call's result)."""
    return is_main(recorded) and any(_says_something(block) for block in _last_user_blocks(recorded))


def shell_call(model: FakeModelServer, command: str, *, then: str) -> None:
    """The next turn calls `Bash` with `command`; the request with its result gets `then`. A turn
    that never sends the result (a stop, a deny that ends the turn) leaves `then` unused, so the
    next turn's own script comes next."""
    arguments = json.dumps({"command": command, "description": "Run the command"})
    half = len(arguments) // 2
    call = (CALL_ID, MAIN_TOOL, [arguments[:half], arguments[half:]])
    model.route(_prompted, Stream(anthropic_stream(["I will run it."], [call])))
    model.route(_answers(CALL_ID), Stream(anthropic_stream([then])))


def answer(model: FakeModelServer, text: str) -> None:
    model.route(_prompted, Stream(anthropic_stream([text])))


# -- the wire --------------------------------------------------------------------------------------

KNOWN_EXTENSIONS = (
    "notifications whose method starts with `_` (`_auth/status_update`): ACP extension methods",
    "`$/cancel_request` (ACP's draft request cancellation): after `session/cancel` it withdraws "
    "its own `session/request_permission`, sometimes after we answered it `cancelled`",
    "`name` (the Claude Code tool's name, `Bash`) on `tool_call` updates and on the permission "
    "request's `toolCall`: a field the schema does not have (it belongs in `_meta`)",
    "`agentCapabilities.sessionCapabilities.systemPrompt` in the `initialize` result: a "
    "capability the schema does not have",
    "`sessionId` in the `session/load` result: a field the schema does not have",
)
"""What the adapter sends beyond the ACP schema; `without_extensions` takes exactly these out,
so the rest of each message is checked against the schema."""


def without_extensions(message: dict[str, Any], answering: str | None = None) -> dict[str, Any] | None:
    """`message` without the adapter's `KNOWN_EXTENSIONS` (None: an extension method as a whole).
    `answering`: the method of the request a response answers."""
    method = message.get("method")
    if isinstance(method, str) and method.startswith(("_", "$/")):
        return None
    copy = json.loads(json.dumps(message))
    params = copy.get("params")
    if isinstance(params, dict):
        update = params.get("update")
        if isinstance(update, dict) and update.get("sessionUpdate") in ("tool_call", "tool_call_update"):
            update.pop("name", None)
        call = params.get("toolCall")
        if method == "session/request_permission" and isinstance(call, dict):
            call.pop("name", None)
    result = copy.get("result")
    if isinstance(result, dict) and isinstance(result.get("agentCapabilities"), dict):
        session = result["agentCapabilities"].get("sessionCapabilities")
        if isinstance(session, dict):
            session.pop("systemPrompt", None)
    if answering == "session/load" and isinstance(result, dict):
        result.pop("sessionId", None)
    return copy


def reported_costs(messages: list[tuple[str, dict[str, Any]]]) -> list[float]:
    """The USD amounts of the `usage_update`s that carry a cost (the session's running total)."""
    amounts = []
    for _, message in messages:
        update = (message.get("params") or {}).get("update") or {}
        cost = update.get("cost") if update.get("sessionUpdate") == "usage_update" else None
        if isinstance(cost, dict) and cost.get("currency") == "USD":
            amounts.append(float(cost["amount"]))
    return amounts


SCRUBBED_AT = {"workspace": "/work/ws", "home": "/work/home", "sessions_dir": "/work/logs"}
SESSION_ID = "00000000-0000-4000-8000-00000000c1de"
"""The agent's session id in a saved transcript (it makes a new one each run)."""
COMMANDS_KEPT = 5
DESCRIPTION_LIMIT = 60
"""A saved transcript keeps the first `COMMANDS_KEPT` slash commands of each
`available_commands_update`, their descriptions cut to `DESCRIPTION_LIMIT` characters (Claude Code
lists some sixty, its skills described in paragraphs: 30 kB a transcript)."""


def transcript(messages: list[tuple[str, dict[str, Any]]], run: Any) -> str:
    """`messages` as JSONL (`{"dir": "in"|"out", "message": ...}`), scrubbed of what is specific to
    the host and the run: the test's directories, the agent's session id, long descriptions."""
    lines = []
    for way, message in messages:
        update = (message.get("params") or {}).get("update") or {}
        if update.get("sessionUpdate") == "available_commands_update":
            message = json.loads(json.dumps(message))
            commands = message["params"]["update"]["availableCommands"][:COMMANDS_KEPT]
            message["params"]["update"]["availableCommands"] = commands
            for command in commands:
                text = command.get("description") or ""
                if len(text) > DESCRIPTION_LIMIT:
                    command["description"] = text[: DESCRIPTION_LIMIT - 1] + "…"
        lines.append(json.dumps({"dir": way, "message": message}, ensure_ascii=False))
    text = "\n".join(lines) + "\n"
    for attribute, fixed in SCRUBBED_AT.items():
        text = text.replace(str(getattr(run, attribute)), fixed)
    for _, message in messages:
        result = message.get("result")
        if isinstance(result, dict) and isinstance(result.get("sessionId"), str):
            text = text.replace(result["sessionId"], SESSION_ID)
    return text
