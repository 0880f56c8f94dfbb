"""What the private-state tests share: every kind of file agent-tui keeps of a session, made for
real (a scripted run that writes a file, its log, undo blobs and records, `closed.txt`, the search
index with its `-wal`/`-shm`, an export, an import and the import cache), under one base folder.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import anyio
from support_workbench import agent_script, scripted_models

from agent_tui.engine.questions import Questions, fixed_answer
from agent_tui.engine.scenario import ScriptedToolCall, Step
from agent_tui.engine.scripted import ScriptedProvider
from agent_tui.export import write_export
from agent_tui.importers.convert import import_path
from agent_tui.importers.materialize import cache_root, replay_inputs
from agent_tui.runtime.session_dirs import default_sessions_dir, exports_dir, mark_closed
from agent_tui.runtime.turn_records import undo_dir
from agent_tui.runtime.workbench import AgentSpec, Workbench
from agent_tui.search.index import SearchIndex
from agent_tui.search.location import index_path

CLAUDE_LOG = next(
    (Path(__file__).parent / "fixtures" / "claude_code" / "v1.0-inline-sidechain").glob("*.jsonl")
)
SECRET = "the contents of a 0600 file the agent read"


@dataclass
class SessionContent:
    """Where each kind of session content went (`files`), and the folders agent-tui made."""

    files: dict[str, Path] = field(default_factory=dict)
    folders: list[Path] = field(default_factory=list)
    index: SearchIndex | None = None
    """The search index, still open (its `-wal` and `-shm` exist only while it is): close it."""


async def make_session_content(base: Path, project: Path) -> SessionContent:
    """Everything agent-tui keeps of a session, made under `base/data` and `base/cache` (which must
    not exist yet, so every folder below `base` is agent-tui's). `$XDG_CACHE_HOME` must be
    `base/cache` (the import cache's place). The search index is left open (`content.index`)."""
    data = base / "data"
    assert os.environ.get("XDG_CACHE_HOME") == str(base / "cache")
    (project / "secret.txt").write_text(SECRET)
    provider = ScriptedProvider(
        agents={
            "agent": agent_script(
                Step(
                    text=["Working."],
                    toolCalls=[
                        ScriptedToolCall(tool="write_file", args={"path": "secret.txt", "content": "new\n"})
                    ],
                ),
                Step(text=["Done."]),
            )
        }
    )
    sessions = default_sessions_dir(project, data)
    workbench = Workbench.for_project(
        project=project,
        sessions_dir=sessions,
        models=scripted_models(provider),
        questions=Questions(fixed_answer("allow")),
        data_dir=data,
    )
    async with workbench.engine:
        sid = await workbench.start_agent(AgentSpec("Read the secret", project, name="agent"))
        with anyio.fail_after(20):
            while workbench.is_running(sid):
                await anyio.sleep(0.01)
        await workbench.close()
    workbench.close_store()
    mark_closed(sessions, [sid])
    content = SessionContent()
    log = sessions / f"{sid}.jsonl"
    undo = undo_dir(sessions, sid)
    blobs = list((undo / "blobs").iterdir())
    assert [blob.read_text() for blob in blobs] == [SECRET]  # the before-content, kept
    content.files.update(log=log, undo_records=undo / "records.jsonl", undo_blob=blobs[0])
    content.files["closed_list"] = sessions / "closed.txt"
    index_file = index_path(sessions, data)
    content.index = SearchIndex.open(index_file)
    content.index.sync([log])
    content.files.update(
        index=index_file,
        index_wal=Path(f"{index_file}-wal"),
        index_shm=Path(f"{index_file}-shm"),
    )
    content.files["export"] = write_export(log, exports_dir(data))
    imported = import_path(CLAUDE_LOG.parent, data / "imported" / "sessions")
    content.files["import"] = imported.written[0]
    inputs = replay_inputs([CLAUDE_LOG])
    content.files["import_cache"] = inputs.files[0]
    assert inputs.files[0].is_relative_to(cache_root())
    inputs.close()
    for name, path in content.files.items():
        assert path.is_file(), name
    content.folders = sorted(
        path for root in (base / "data", base / "cache") for path in [root, *root.rglob("*")] if path.is_dir()
    )
    return content
