"""Gemini CLI (`gemini --acp`) as a real agent of the `-m real_agents` pass (see support_real_agents).

How it is kept offline and deterministic:
- `GOOGLE_GEMINI_BASE_URL` points its `@google/genai` client at the fake server and
  `GEMINI_API_KEY` is a fake key; `~/.gemini/settings.json` selects that key as the way to log in
  (`security.auth.selectedType = gemini-api-key`), so it needs no `authenticate` and never opens a
  browser for Google's login;
- the settings name a concrete model, so no router asks which model to use, and turn off what
  would call out or ask the model on the side: usage statistics (Clearcut), telemetry, update
  checks, IDE integration, the next-speaker check, loop detection (which asks the model when it
  suspects a loop), checkpointing and folder trust (an untrusted folder would change its tools);
- a model request is tried once (`general.maxAttempts`), so a reply the test did not script
  ends the turn with the fake server's error at once instead of after ten backed-off retries;
- its approval mode stays `default`: it asks (`session/request_permission`) before each
  `run_shell_command`. `security.enablePermanentToolApproval` stays off, so it offers no option
  that outlives the session.

Every request it sends is `POST /v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse`;
anything else gets the fake server's "no reply scripted" 500, and the tests check for none.
"""

from __future__ import annotations

import json
from pathlib import Path

from fake_gemini_api import GEMINI_MODEL, answers_a_tool, gemini_stream
from fake_model_server import FakeModelServer, Stream
from support_real_agents import AgentSetup, standard_config

NAME = "gemini"

SHELL_TOOL = "run_shell_command"

SETTINGS = {
    "security": {
        "auth": {"selectedType": "gemini-api-key"},
        "folderTrust": {"enabled": False},
        "enablePermanentToolApproval": False,
    },
    "general": {
        "defaultApprovalMode": "default",
        "enableAutoUpdate": False,
        "enableAutoUpdateNotification": False,
        "checkpointing": {"enabled": False},
        "maxAttempts": 1,
        "retryFetchErrors": False,
    },
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "ide": {"enabled": False},
    "model": {"name": GEMINI_MODEL, "skipNextSpeakerCheck": True, "disableLoopDetection": True},
}


def setup(home: Path, model: FakeModelServer) -> AgentSetup:
    config_dir = home / ".gemini"
    config_dir.mkdir(parents=True, exist_ok=True)
    (config_dir / "settings.json").write_text(json.dumps(SETTINGS, indent=2))
    return standard_config(
        NAME,
        {
            "GEMINI_API_KEY": "fake-gemini-key",
            "GOOGLE_GEMINI_BASE_URL": f"http://127.0.0.1:{model.port}",
        },
    )


def shell_call(model: FakeModelServer, command: str, *, then: str) -> None:
    """The next turn calls `run_shell_command` with `command`; the request that hands the model
    the tool's result (allowed or refused) is answered `then`."""
    model.script(Stream(gemini_stream(calls=[(SHELL_TOOL, {"command": command, "description": "as asked"})])))
    model.route(answers_a_tool, Stream(gemini_stream([then])))


def answer(model: FakeModelServer, text: str) -> None:
    model.script(Stream(gemini_stream([text])))
