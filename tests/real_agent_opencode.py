"""opencode (`opencode-ai`, `opencode acp`) against the fake model, speaking OpenAI Chat Completions.

`setup` writes `~/.config/opencode/opencode.json` into the isolated home: one custom provider
(`fake`, through the OpenAI-compatible SDK that opencode bundles) whose `baseURL` is the fake
server, its only model as both the main and the small model, and `permission.bash = "ask"`, so
every shell command is asked for (`session/request_permission`) before it runs. The variables
it is started with turn off what would reach beyond 127.0.0.1: the models.dev catalogue fetch,
update checks, sharing, LSP downloads, reading `~/.claude`.

Invariants:
- opencode sends a side request per session (the title generator, whose system prompt starts
  "You are a title generator"): `setup` routes those to a fixed title, so a test's script only
  sees the agent's own turns;
- a shell call's follow-up (the request that ends with the tool's result for that call id; a
  later turn's request carries it too, further up) is routed to its `then`, so the script's
  order is the order of the user's prompts;
- the program is the platform binary of the pinned `opencode-ai` (the installer skips npm
  scripts, so the package's own `bin/opencode.exe`, which its postinstall script replaces, only
  prints an error).
"""

from __future__ import annotations

import itertools
import json
import platform
from pathlib import Path
from typing import Any

from fake_model_server import FakeModelServer, Recorded, Stream, openai_stream
from support_real_agents import AGENTS_DIR, AgentSetup, agent_args, agent_program

from agent_tui.acp.config import AcpAgentConfig

NAME = "opencode"
MODEL = "fake-model"

ENV = {
    "OPENCODE_DISABLE_AUTOUPDATE": "1",
    "OPENCODE_DISABLE_MODELS_FETCH": "1",
    "OPENCODE_DISABLE_SHARE": "1",
    "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
    "OPENCODE_DISABLE_CLAUDE_CODE": "1",
    "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
    "OPENCODE_FAKE_KEY": "sk-fake-opencode",
}

_ids = itertools.count(1)


def program() -> Path:
    """The platform binary inside the pinned package (see the module docstring)."""
    agent_program(NAME)  # fails with the install command when the pin is not installed
    arch = {"x86_64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(platform.machine(), platform.machine())
    modules = AGENTS_DIR / "npm" / "node_modules"
    packages = [f"opencode-linux-{arch}", f"opencode-linux-{arch}-baseline"]
    if arch == "x64" and not _has_avx2():  # the build for CPUs without AVX2, as its installer picks
        packages.reverse()
    for package in packages:
        binary = modules / package / "bin" / "opencode"
        if binary.exists():
            return binary
    raise AssertionError(f"opencode's platform binary is not in {modules} (opencode-linux-{arch})")


def _has_avx2() -> bool:
    try:
        return " avx2" in Path("/proc/cpuinfo").read_text()
    except OSError:
        return False


def setup(home: Path, model: FakeModelServer) -> AgentSetup:
    config = {
        "$schema": "https://opencode.ai/config.json",
        "autoupdate": False,
        "share": "disabled",
        "model": f"fake/{MODEL}",
        "small_model": f"fake/{MODEL}",
        "provider": {
            "fake": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Fake model server",
                "options": {"baseURL": model.openai_url, "apiKey": "{env:OPENCODE_FAKE_KEY}"},
                "models": {MODEL: {"name": "Fake model", "tool_call": True}},
            }
        },
        "permission": {"bash": "ask"},
    }
    directory = home / ".config" / "opencode"
    directory.mkdir(parents=True)
    (directory / "opencode.json").write_text(json.dumps(config, indent=2) + "\n")
    model.route(is_title_request, *[Stream(openai_stream(["Making a file"]))] * 50)
    config_ = AcpAgentConfig(NAME, str(program()), agent_args(NAME), tuple(ENV))
    return AgentSetup(config_, dict(ENV))


def is_title_request(recorded: Recorded) -> bool:
    messages = recorded.body.get("messages", []) if isinstance(recorded.body, dict) else []
    return bool(messages) and str(messages[0].get("content", "")).startswith("You are a title generator")


def carries_result_of(call_id: str) -> Any:
    def when(recorded: Recorded) -> bool:
        messages = recorded.body.get("messages", []) if isinstance(recorded.body, dict) else []
        last = messages[-1] if messages else {}
        return last.get("role") == "tool" and last.get("tool_call_id") == call_id

    return when


def shell_call(model: FakeModelServer, command: str, *, then: str) -> None:
    call_id = f"call_oc{next(_ids)}"
    arguments = json.dumps({"command": command, "description": "Run the command"})
    half = len(arguments) // 2
    model.route(carries_result_of(call_id), Stream(openai_stream([then])))
    model.script(Stream(openai_stream([], [(call_id, "bash", [arguments[:half], arguments[half:]])])))


def answer(model: FakeModelServer, text: str) -> None:
    model.script(Stream(openai_stream([text])))
