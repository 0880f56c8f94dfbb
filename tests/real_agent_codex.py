"""The real-agent adapter for Codex (`@zed-industries/codex-acp`, which embeds Codex's own core).

Codex talks the OpenAI Responses API (`POST {base_url}/responses`, `tests/fake_responses_api.py`)
and reads `$CODEX_HOME/config.toml` (`~/.codex`): `setup` writes one that

- picks a model provider of our own (`model_provider = "fake"`) whose `base_url` is the fake
  model and whose key comes from `CODEX_FAKE_MODEL_KEY`: Codex asks for a login
  (`authenticate`) only for its built-in `openai` provider, so none is needed, and it makes no
  request to OpenAI's or ChatGPT's servers (no model list, no account);
- keeps the question before every command that is not a known read (`approval_policy =
  "untrusted"`: the default user experience of asking, through `session/request_permission`);
- runs commands without Codex's own sandbox (`sandbox_mode = "danger-full-access"`): its
  Linux sandbox needs user namespaces that a root test container does not give it, and the
  question, not the sandbox, is what the tests are about;
- turns off its analytics and retries (a failed request fails at once: the script is the
  only model there is).

Codex runs commands itself (its `exec_command` tool, one command line in `cmd`), never through
the client's terminals, and asks first. A model's function call is streamed as the API does,
its arguments in two pieces; the request that hands its output back is answered with `then`.
"""

from __future__ import annotations

import itertools
import json
import weakref
from pathlib import Path

from fake_model_server import FakeModelServer, Stream
from fake_responses_api import RESPONSES_MODEL, answers_call, responses_stream
from support_real_agents import AgentSetup, standard_config

NAME = "codex"
KEY = "CODEX_FAKE_MODEL_KEY"
SHELL_TOOL = "exec_command"

_calls: weakref.WeakKeyDictionary[FakeModelServer, itertools.count[int]] = weakref.WeakKeyDictionary()
"""Each fake model numbers its calls from 1 (`call_1`...), so transcripts do not depend on test order."""


def setup(home: Path, model: FakeModelServer) -> AgentSetup:
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(
        f"""model = "{RESPONSES_MODEL}"
model_provider = "fake"
approval_policy = "untrusted"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false

[model_providers.fake]
name = "fake model"
base_url = "{model.openai_url}"
env_key = "{KEY}"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false
"""
    )
    return standard_config(NAME, {KEY: "sk-fake-codex", "CODEX_HOME": str(codex_home)})


def shell_call(model: FakeModelServer, command: str, *, then: str) -> None:
    scripted_shell_call(model, command, then=then)


def scripted_shell_call(model: FakeModelServer, command: str, *, then: str) -> str:
    """`shell_call`, returning the call's id (Codex uses it as the ACP `toolCallId` too)."""
    call_id = f"call_{next(_calls.setdefault(model, itertools.count(1)))}"
    arguments = json.dumps({"cmd": command})
    cut = len(arguments) // 2
    model.route(answers_call(call_id), Stream(responses_stream([then])))
    model.script(Stream(responses_stream([], [(call_id, SHELL_TOOL, [arguments[:cut], arguments[cut:]])])))
    return call_id


def answer(model: FakeModelServer, text: str) -> None:
    model.script(Stream(responses_stream([text])))
