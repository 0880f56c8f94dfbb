"""Where `agent-tui acp` keeps its sessions when not told: the project's sessions directory, the
one the dashboard and `agent-tui sessions` list for the directory it runs in."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from acp import PROTOCOL_VERSION, spawn_agent_process, text_block
from test_acp_load import Collector, pass_on

from agent_tui.runtime.session_dirs import default_sessions_dir

pytestmark = pytest.mark.anyio


async def test_a_session_served_without_sessions_dir_is_listed_in_its_project(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    script = tmp_path / "scenario.json"
    script.write_text(json.dumps({"sessions": [{"prompt": "-", "steps": [{"text": ["Hi."]}]}]}))
    env = {**pass_on(), "HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path / "data")}
    async with spawn_agent_process(
        Collector(),  # type: ignore[arg-type]  # a partial client: only the calls this test gets
        sys.executable, "-m", "agent_tui", "acp", "--scenario", str(script), env=env, cwd=project,
    ) as (conn, _process):  # fmt: skip
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        answer = await conn.prompt(session_id=session.session_id, prompt=[text_block("Hello")])
        assert answer.stop_reason == "end_turn"
    expected = default_sessions_dir(project, tmp_path / "data" / "agent-tui")
    [log] = expected.glob("sess_*.jsonl")
    assert log.stem == session.session_id
    assert not (tmp_path / "data" / "agent-tui" / "sessions").exists()  # the old, shared place
    listing = subprocess.run(
        [sys.executable, "-m", "agent_tui", "sessions", "--cwd", str(project)],
        capture_output=True, text=True, env={**os.environ, **env}, check=True,
    )  # fmt: skip
    assert session.session_id in listing.stdout
