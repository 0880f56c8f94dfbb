"""Importers: Claude Code and Codex session logs → our event logs.

Each importer is a pure, incremental converter (`feed(line_number, raw_line)`, `finish()`), so
the same source always gives the same events and follow mode can feed lines as they are
appended. Nothing above this package learns the foreign formats: the reducer, the scrubber and
`--dump` read the logs these write.
"""

from agent_tui.importers.builder import ImportCounts
from agent_tui.importers.claude_code import ClaudeCodeImporter
from agent_tui.importers.codex import CodexImporter
from agent_tui.importers.convert import ImportInputError, ImportLineError, ImportReport, discover, import_path
from agent_tui.importers.detect import detect_format
from agent_tui.importers.materialize import ReplayInputs, replay_inputs

__all__ = [
    "ClaudeCodeImporter",
    "CodexImporter",
    "ImportCounts",
    "ImportInputError",
    "ImportLineError",
    "ImportReport",
    "ReplayInputs",
    "detect_format",
    "discover",
    "import_path",
    "replay_inputs",
]
