"""Mistral Vibe (`mistral-vibe`, `vibe-acp`) against the fake model, speaking OpenAI Chat Completions.

`setup` writes `~/.vibe/config.toml` into the isolated home: one provider (`fake`, the
OpenAI-compatible API style) whose `api_base` is the fake server's `/v1` and whose key is read
from `FAKE_VIBE_API_KEY` (any string), its only model as the active one, the bash tool at `ask`
(its default, written out so the test does not depend on it), and telemetry, update checks,
auto-update, the model catalogue, connectors and notifications off, so nothing reaches beyond
127.0.0.1.

Invariants:
- Vibe names each session after its first turn with a side request (system prompt "You name
  coding-agent sessions ..."), sent after the turn ended: `setup` routes those to a fixed
  title, so a test's script only sees the agent's own turns;
- a shell call's follow-up (the request that ends with the tool's result for that call id; a
  later turn's request carries it too, further up) is routed to its `then`, so the script's
  order is the order of the user's prompts.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

from fake_model_server import FakeModelServer, Recorded, Stream, openai_stream
from support_real_agents import AgentSetup, standard_config

NAME = "vibe"
MODEL = "fake-model"
KEY = "FAKE_VIBE_API_KEY"

_ids = itertools.count(1)

_CONFIG = """\
active_model = "fake"
enable_telemetry = false
enable_update_checks = false
enable_auto_update = false
experimental_enable_model_catalog = false
enable_connectors = false
enable_notifications = false

[[providers]]
name = "fake"
api_base = "{api_base}"
api_key_env_var = "{key}"
api_style = "openai"
backend = "generic"

[[models]]
name = "{model}"
provider = "fake"
alias = "fake"

[tools.bash]
permission = "ask"
"""


def setup(home: Path, model: FakeModelServer) -> AgentSetup:
    directory = home / ".vibe"
    directory.mkdir()
    (directory / "config.toml").write_text(_CONFIG.format(api_base=model.openai_url, key=KEY, model=MODEL))
    model.route(is_title_request, *[Stream(openai_stream(["Making a file"]))] * 50)
    return standard_config(NAME, {KEY: "sk-fake-vibe"})


def _messages(recorded: Recorded) -> list[dict[str, Any]]:
    return recorded.body.get("messages", []) if isinstance(recorded.body, dict) else []


def is_title_request(recorded: Recorded) -> bool:
    messages = _messages(recorded)
    return bool(messages) and str(messages[0].get("content", "")).startswith("You name coding-agent sessions")


def carries_result_of(call_id: str) -> Any:
    def when(recorded: Recorded) -> bool:
        messages = _messages(recorded)
        last = messages[-1] if messages else {}
        return last.get("role") == "tool" and last.get("tool_call_id") == call_id

    return when


def shell_call(model: FakeModelServer, command: str, *, then: str) -> None:
    call_id = f"call_vb{next(_ids)}"
    arguments = json.dumps({"command": command})
    half = len(arguments) // 2
    model.route(carries_result_of(call_id), Stream(openai_stream([then])))
    model.script(Stream(openai_stream([], [(call_id, "bash", [arguments[:half], arguments[half:]])])))


def answer(model: FakeModelServer, text: str) -> None:
    model.script(Stream(openai_stream([text])))
