"""Each real agent in the dashboard, in a real terminal: asked, allowed from the queue, its output shown.

`agent-tui --agent NAME --prompt …` runs in tmux the way a user starts it, the agent declared as
an `[acp.NAME]` table in a config file of its own, with `$HOME` a fresh directory (nothing of
the user's is read) and the agent pointed at a fake model on 127.0.0.1 that this test scripts:
the model calls the agent's shell tool, the question opens in the dashboard's dialog with the
real command, `A` opens it and `y` allows it, the command runs (the file it makes exists) and the model's answer
is on screen. One smoke test per agent; the behaviour in detail is in `tests/test_real_<name>.py`.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest
from fake_model_server import FakeModelServer
from support_real_agents import REAL_AGENTS, write_config
from support_tmux import Tmux

pytestmark = pytest.mark.real_agents

COMMAND = "printf hello > made.txt; echo done"
ANSWER = "The file is there now."


@pytest.mark.parametrize("name", REAL_AGENTS)
def test_an_agent_asks_in_the_dashboard_and_runs_once_allowed(name: str, tmp_path: Path, tmux: Tmux) -> None:
    adapter = importlib.import_module(f"real_agent_{name}")
    home = tmp_path / "home"
    home.mkdir()
    project = tmp_path / "project"
    project.mkdir()
    with FakeModelServer() as model:
        agent = adapter.setup(home, model)
        adapter.shell_call(model, COMMAND, then=ANSWER)
        config = write_config(tmp_path / "config.toml", agent)
        env = {"HOME": str(home), "AGENT_TUI_CONFIG": str(config), **agent.env}
        tmux.start(
            sys.executable, "-m", "agent_tui", "--agent", name, "--prompt", "Make the file",
            env=env, cwd=project,
        )  # fmt: skip
        tmux.wait_for("waiting for approval", f"{name}'s question in the queue", timeout=180)
        assert not (project / "made.txt").exists()
        tmux("send-keys", "-t", "t", "A")  # the oldest question of the queue, in its dialog
        tmux.wait_for("esc closes", f"{name}'s question in the dialog")
        tmux("send-keys", "-t", "t", "y")
        tmux.wait_for(ANSWER, f"{name}'s answer after the command ran", timeout=180)
        assert (project / "made.txt").read_text() == "hello"
        tmux("send-keys", "-t", "t", "C-q")
        tmux.wait_for("dead", "the dashboard to quit")
