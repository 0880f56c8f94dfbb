"""The bytes an import writes do not move when the import is made faster: every log written for
the importer fixtures and for a log shaped as the import benchmark's (`import_bytes/`, two turns
that `bench/bench_import.py` writes: prompts, thinking, text and tool calls split over lines that
share a message id, a failed command, an edit, usage priced by the maintained table) has the
SHA-256 recorded in `expected/import_bytes.json`, and `feed_lines` (follow mode's path) makes the
same lines as the import's loop wrote.

The digests were taken from the import as it was before its hot path was reworked. When a change
of the log's format (or a new `genai-prices` release's prices) changes them on purpose, write
them again with `.venv/bin/python tests/test_import_bytes.py` and say why in the commit.
"""

from __future__ import annotations

import hashlib
import sys
import tempfile
from pathlib import Path

import orjson
from support_importers import EXPECTED, FIXTURES, fixture_dirs

from agent_tui.importers import import_path
from agent_tui.importers.convert import discover, feed_final
from agent_tui.importers.source_lines import SourceLines

DIGESTS = EXPECTED / "import_bytes.json"
BENCH_SHAPED = FIXTURES / "import_bytes"


def _sources() -> dict[str, Path]:
    folders = {"bench-shaped": BENCH_SHAPED}
    for tool in ("claude_code", "codex"):
        for folder in fixture_dirs(tool):
            folders[f"{tool}/{folder.name}"] = folder
    return folders


def written_digests(out_root: Path) -> dict[str, str]:
    """`source folder/written log` → the SHA-256 of the log the import wrote."""
    digests: dict[str, str] = {}
    for name, folder in _sources().items():
        out = out_root / name.replace("/", "-")
        import_path(folder, out)
        written = sorted(out.glob("*.jsonl"))
        assert written, f"{name}: the import wrote nothing"
        for log in written:
            digests[f"{name}/{log.name}"] = hashlib.sha256(log.read_bytes()).hexdigest()
    return digests


def test_every_written_log_has_the_recorded_bytes(tmp_path: Path) -> None:
    expected = orjson.loads(DIGESTS.read_bytes())
    got = written_digests(tmp_path)
    assert got.keys() == expected.keys()
    changed = [name for name in expected if got[name] != expected[name]]
    assert not changed, f"these logs are no longer written byte for byte as before: {changed}"


def test_feed_lines_makes_the_lines_the_import_wrote(tmp_path: Path) -> None:
    """The import's loop drains what `read_line` wrote; follow mode and tests take the lines
    from `feed_lines`: both give the same lines, in the same order."""
    for name, folder in _sources().items():
        out = tmp_path / name.replace("/", "-")
        import_path(folder, out)
        written = {log.name: log.read_bytes() for log in out.glob("*.jsonl")}
        fed: dict[str, bytearray] = {}
        for source in discover([folder]).sources:
            importer = source.importer()
            lines = []
            with source.path.open("rb") as handle:
                reader = SourceLines(handle)
                for number, line in reader:
                    lines += importer.feed_lines(number, line)
            lines += feed_final(importer, reader.next_number, reader.tail)
            lines += importer.finish_lines()
            for made in lines:
                log = fed.setdefault(f"{made['sessionId']}.jsonl", bytearray())
                log += orjson.dumps(made, option=orjson.OPT_APPEND_NEWLINE)
        assert {log: bytes(data) for log, data in fed.items()} == written, name


if __name__ == "__main__":  # write the digests again (see the module docstring)
    with tempfile.TemporaryDirectory() as tmp:
        DIGESTS.write_bytes(
            orjson.dumps(written_digests(Path(tmp)), option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS)
            + b"\n"
        )
    sys.exit(0)
