"""The real-agent tests' shared parts: the installed agents, an isolated home, one harness.

Every test of the `-m real_agents` pass runs a third-party ACP agent installed at its pinned
version (`tests/real-agents.toml`, installed by `python3 scripts/real_agents.py`) against a
`FakeModelServer` on 127.0.0.1 that the test scripts. Each agent has an adapter module
(`tests/real_agent_<name>.py`) with:

- `NAME`: its name in `real-agents.toml`;
- `setup(home, model) -> AgentSetup`: writes whatever the agent reads from its home into
  `home` (a fresh directory that is `$HOME` for the test: nothing of the user's is read) and
  says how to start it pointed at `model`;
- `shell_call(model, command, *, then)`: scripts the model so the agent's next turn calls its
  shell tool with `command` and, once the tool's result is back, answers `then` as text;
- `answer(model, text)`: scripts one plain text answer.

Invariants:
- a test never skips because an agent is missing: `agent_program` fails with the command that
  installs it;
- nothing here reaches beyond 127.0.0.1 (CI runs the pass in a loopback-only network namespace).
"""

from __future__ import annotations

import importlib.util
import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol

import pytest
from acp_support import Harness
from fake_model_server import FakeModelServer

from agent_tui.acp.config import AcpAgentConfig

_SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "real_agents.py"


def _installer() -> ModuleType:
    spec = importlib.util.spec_from_file_location("real_agents_installer", _SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


INSTALLER = _installer()
AGENTS_DIR: Path = INSTALLER.agents_dir()
"""Read once, at import: the tests give `$HOME` a fresh directory, the agents stay where they are."""


REAL_AGENTS: tuple[str, ...] = tuple(INSTALLER.pins())
"""The agents of the pass, in `real-agents.toml`'s order (each has `tests/real_agent_<name>.py`)."""


def agent_program(name: str) -> Path:
    """The installed program of agent `name`; the test fails (never skips) when it is missing."""
    if name in INSTALLER.missing(AGENTS_DIR):
        version = INSTALLER.pins()[name]["version"]
        pytest.fail(
            f"the real agent {name} {version} is not installed in {AGENTS_DIR}: "
            f"run `{INSTALLER.INSTALL_COMMAND}`",
            pytrace=False,
        )
    return Path(INSTALLER.executable(name, AGENTS_DIR))


def agent_args(name: str) -> tuple[str, ...]:
    return tuple(INSTALLER.pins()[name]["args"])


def agent_version(name: str) -> str:
    return str(INSTALLER.pins()[name]["version"])


@dataclass
class AgentSetup:
    """How to start one agent: its config (as a user's `[acp.NAME]` table would say) and the
    values of the variables its `env` names."""

    config: AcpAgentConfig
    env: dict[str, str] = field(default_factory=dict)


class Adapter(Protocol):
    NAME: str

    def setup(self, home: Path, model: FakeModelServer) -> AgentSetup: ...

    def shell_call(self, model: FakeModelServer, command: str, *, then: str) -> None: ...

    def answer(self, model: FakeModelServer, text: str) -> None: ...


def standard_config(name: str, env: dict[str, str]) -> AgentSetup:
    """The pinned program and arguments of `name`, given the variables in `env`."""
    config = AcpAgentConfig(name, str(agent_program(name)), agent_args(name), tuple(env))
    return AgentSetup(config, env)


def write_config(path: Path, agent: AgentSetup) -> Path:
    """`agent` as the `[acp.NAME]` table of a config file at `path`, the way a user declares it."""
    config = agent.config
    path.write_text(
        f"[acp.{config.name}]\n"
        f"command = {json.dumps(config.command)}\n"
        f"args = {json.dumps(list(config.args))}\n"
        f"env = {json.dumps(list(config.env))}\n"
    )
    return path


@dataclass
class RealRun:
    """What a test drives: the fake model, the agent's setup, the harness, its directories."""

    model: FakeModelServer
    agent: AgentSetup
    harness: Harness
    home: Path
    workspace: Path
    sessions_dir: Path


@asynccontextmanager
async def real_agent(
    adapter: Adapter,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    prompter: Any,
    **agents_options: Any,
) -> AsyncIterator[RealRun]:
    """A fake model, an isolated `$HOME`, a workspace and an engine with `AcpAgents` on it."""
    home = tmp_path / "home"
    home.mkdir()
    workspace = tmp_path / "ws"
    workspace.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"):
        monkeypatch.delenv(name, raising=False)
    with FakeModelServer() as model:
        agent = adapter.setup(home, model)
        options = {"start_timeout": 120.0, **agents_options}
        async with Harness(
            tmp_path / "logs", prompter, env={**os.environ, **agent.env}, **options
        ) as harness:
            yield RealRun(model, agent, harness, home, workspace, tmp_path / "logs")
