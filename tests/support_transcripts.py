"""ACP wire transcripts of the real agents, recorded by the `-m real_agents` tests.

A `Transcript` is a wire observer (`AcpAgents.observers`): it keeps every JSON-RPC message in
both directions, in order. `save` writes them as JSONL, one `{"dir": "in"|"out", "message": ...}`
a line ("in" is what the agent sent us), with the run's temporary paths replaced by fixed ones
(the workspace by `/work/ws`), so the files under `tests/fixtures/acp-transcripts/<agent>/` are
the same whoever records them, and unit tests of the mapping can replay them.

Invariants:
- the tests save a transcript only when `AGENT_TUI_RECORD_TRANSCRIPTS` is set (recording is a
  deliberate act, the fixtures are not rewritten by every run);
- a saved transcript holds no path of the machine that recorded it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from acp.connection import StreamDirection, StreamEvent

TRANSCRIPTS = Path(__file__).resolve().parent / "fixtures" / "acp-transcripts"
RECORD = "AGENT_TUI_RECORD_TRANSCRIPTS"


class Transcript:
    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = []

    def __call__(self, event: StreamEvent) -> None:
        direction = "in" if event.direction is StreamDirection.INCOMING else "out"
        self.lines.append({"dir": direction, "message": event.message})

    def scrubbed(self, paths: dict[Path, str]) -> list[str]:
        """The lines as JSON, each path of `paths` (longest first) replaced by its fixed name."""
        order = sorted(paths.items(), key=lambda item: len(str(item[0])), reverse=True)
        lines = []
        for line in self.lines:
            text = json.dumps(line, ensure_ascii=False)
            for path, fixed in order:
                text = text.replace(str(path), fixed)
            lines.append(text)
        return lines

    def save(self, agent: str, name: str, paths: dict[Path, str]) -> None:
        """Write `fixtures/acp-transcripts/<agent>/<name>.jsonl`, when recording is asked for."""
        if not os.environ.get(RECORD):
            return
        directory = TRANSCRIPTS / agent
        directory.mkdir(parents=True, exist_ok=True)
        (directory / f"{name}.jsonl").write_text("\n".join(self.scrubbed(paths)) + "\n")
