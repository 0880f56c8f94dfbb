"""Which Claude Code and Codex sessions a project has: found in the CLIs' own transcript folders.

`discover(project)` lists the transcripts of sessions run in `project` (or under it), newest
first; `discover(None, all_projects=True)` every project's. The folders are those of
`importers.locations` (`$CLAUDE_CONFIG_DIR/projects`, `$CODEX_HOME/sessions`, else the CLIs'
defaults under the home directory).

Invariants:
- only the head of a transcript is read (at most `HEAD_BYTES`, `HEAD_LINES` lines), never the
  whole file: a machine with thousands of transcripts is listed in well under a second;
- Claude Code keeps one folder per project, named by the project's directory with every
  character but a letter or a digit written `-`; only the folders that name `project` (or a
  directory under it) are opened, and each transcript's own `cwd` decides (the name is lossy).
  Codex keeps rollouts by date: every rollout's head is read for its `session_meta.payload.cwd`;
- a Claude Code sub-agent's log (`agent-*.jsonl`) is not a session of its own (it is read with its
  session); a Codex sub-agent's rollout is listed with its parent's CLI session id
  (`parent_cli_id`);
- an unreadable or unrecognisable file is skipped with at most one warning line naming it
  (`FILE: reason (skipped)`, control characters shown as markers), never an exception; a missing
  folder is no session and no warning; a symbolic link, a FIFO or a device is never opened;
- the CLIs' files are never written.

`hooks_installed(project)` tells whether agent-tui's hook is in one of the CLIs' settings files
(the user's, or the project's): with it, the dashboard opens on the project even before its first
terminal session.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import orjson

from agent_tui.events import visible
from agent_tui.events.terminal_text import one_line
from agent_tui.importers.claude_code_words import TITLE_RECORDS
from agent_tui.importers.ids import normalize_ts, session_id_for
from agent_tui.importers.locations import default_dir

Cli = Literal["claude-code", "codex"]

HEAD_BYTES = 64 * 1024
"""At most this much of a transcript's start is read."""
HEAD_LINES = 40
"""At most this many of its first lines are looked at."""
FIRST_READ = 8 * 1024
"""The first read of a head: most transcripts tell all that is needed in it."""
TITLE_CHARS = 60

_NOT_NAME = re.compile(r"[^A-Za-z0-9]")
_FIELD = {
    key: re.compile(rb'"' + key.encode() + rb'"\s*:\s*"((?:[^"\\]|\\.)*)"')
    for key in ("cwd", "id", "sessionId", "timestamp")
}
_NOT_PROMPTS = (
    "<command-",
    "<local-command-",
    "<bash-",
    "<environment_context>",
    "<user_instructions>",
    "Caveat:",
)


@dataclass(frozen=True)
class TerminalTranscript:
    """One session a CLI keeps a transcript of, as its head tells.

    Attributes:
        cli: which CLI wrote it (`session.created.client` of its import).
        path: the transcript file.
        cli_id: the CLI's own session id.
        session_id: ours for it (the importer's: `sess_<cli id>`).
        cwd: the directory it ran in.
        title: a title the head gives (the CLI's title record, else the first prompt), or None.
        started: when it started (our timestamp shape), or None.
        modified_ns: the file's modification time (the listing is newest first by it).
        parent_cli_id: a Codex sub-agent's parent's CLI session id (None for a session of its own).
        agent_name: a Codex sub-agent's role (else its nickname).
    """

    cli: Cli
    path: Path
    cli_id: str
    session_id: str
    cwd: str
    title: str | None
    started: str | None
    modified_ns: int
    parent_cli_id: str | None = None
    agent_name: str | None = None

    @property
    def parent_session_id(self) -> str | None:
        return session_id_for(self.parent_cli_id) if self.parent_cli_id else None


def claude_folder_name(directory: str) -> str:
    """The name of Claude Code's folder for the project run in `directory`."""
    return _NOT_NAME.sub("-", directory)


def discover(
    project: Path | None,
    *,
    all_projects: bool = False,
    warn: Callable[[str], object] | None = None,
    claude_root: Path | None = None,
    codex_root: Path | None = None,
) -> list[TerminalTranscript]:
    """The Claude Code and Codex sessions run in `project` or under it (every project's with
    `all_projects`), newest first.

    Args:
        project: the project directory (resolved here); ignored with `all_projects`.
        warn: told one line per file skipped (unreadable, or not a transcript it can read).
        claude_root, codex_root: the CLIs' transcript folders (default: `locations.default_dir`).
    """
    if project is None and not all_projects:
        raise ValueError("discover needs a project directory or all_projects")
    say = warn or (lambda line: None)
    where = None if all_projects or project is None else str(project.expanduser().resolve())
    found = _claude_sessions(claude_root or default_dir("claude"), where, say)
    found += _codex_sessions(codex_root or default_dir("codex"), where, say)
    found.sort(key=lambda t: (-t.modified_ns, str(t.path)))
    return found


def _belongs(cwd: str, where: str | None) -> bool:
    return where is None or cwd == where or cwd.startswith(where.rstrip("/") + "/")


# -- Claude Code --------------------------------------------------------------------------------
def _claude_sessions(root: Path, where: str | None, say: Callable[[str], object]) -> list[TerminalTranscript]:
    folders = _entries(root, say)
    if where is not None:
        name = claude_folder_name(where)
        folders = [f for f in folders if f.name == name or f.name.startswith(name + "-")]
    found = []
    for folder in folders:
        if not folder.is_dir(follow_symlinks=False):
            continue
        for entry in _entries(Path(folder.path), say):
            if not entry.name.endswith(".jsonl") or entry.name.startswith("agent-"):
                continue
            if not entry.is_file(follow_symlinks=False):
                continue
            transcript = _claude_transcript(entry.path, say)
            if transcript is not None and _belongs(transcript.cwd, where):
                found.append(transcript)
    return found


def transcript_at(cli: Cli, path: Path) -> TerminalTranscript | None:
    """The session of the transcript at `path` as its head tells (None: none, or unreadable)."""
    read = _claude_transcript if cli == "claude-code" else _codex_transcript
    return read(str(path), lambda line: None)


def _claude_transcript(where: str, say: Callable[[str], object]) -> TerminalTranscript | None:
    path = Path(where)
    head = _read_head(where, say)
    if head is None:
        return None
    records, rest = head
    first = _claude_head(records)
    cwd = first.cwd or _field(rest, "cwd")
    session = first.session or _field(rest, "sessionId")
    title = first.title
    if cwd is None:
        if session is None and not title:  # (a file of titles only, as older releases left: no session)
            say(f"{visible(str(path))}: no Claude Code session in its first lines (skipped)")
        return None
    session = session or path.stem  # (Claude Code names the file by its session)
    return TerminalTranscript(
        cli="claude-code",
        path=path,
        cli_id=session,
        session_id=session_id_for(session),
        cwd=cwd,
        title=_short(title or first.prompt),
        started=first.started or normalize_ts(_field(rest, "timestamp")),
        modified_ns=_mtime(path),
    )


@dataclass
class _ClaudeHead:
    """What a Claude Code transcript's first records tell, each the first one found."""

    cwd: str | None = None
    session: str | None = None
    started: str | None = None
    title: str | None = None
    prompt: str | None = None


def _claude_head(records: list[dict[str, Any]]) -> _ClaudeHead:
    """The folder, session, start, title and first typed prompt in a transcript's first records."""
    head = _ClaudeHead()
    for record in records:
        kind = record.get("type")
        title_key = TITLE_RECORDS.get(kind) if isinstance(kind, str) else None
        if title_key is not None and head.title is None and isinstance(record.get(title_key), str):
            head.title = record[title_key]
        if head.session is None and isinstance(record.get("sessionId"), str):
            head.session = record["sessionId"]
        if kind not in ("user", "assistant", "system"):
            continue
        if head.cwd is None and isinstance(record.get("cwd"), str) and record["cwd"]:
            head.cwd = record["cwd"]
        if head.started is None:
            head.started = normalize_ts(record.get("timestamp"))
        if (
            head.prompt is None
            and kind == "user"
            and not record.get("isSidechain")
            and not record.get("isMeta")
        ):
            head.prompt = _prompt_text(record.get("message"))
    return head


def _prompt_text(message: object) -> str | None:
    """A user record's text, when it is a prompt a person typed (not a tool result, not a command)."""
    if not isinstance(message, dict):
        return None
    content = message.get("content")
    if isinstance(content, list):
        texts = [b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        content = next((t for t in texts if isinstance(t, str)), None)
    if not isinstance(content, str) or not content.strip() or content.lstrip().startswith(_NOT_PROMPTS):
        return None
    return content


# -- Codex ----------------------------------------------------------------------------------------
def _codex_sessions(root: Path, where: str | None, say: Callable[[str], object]) -> list[TerminalTranscript]:
    transcripts = (_codex_transcript(entry.path, say) for entry in _rollouts(root, say))
    return [transcript for transcript in transcripts if transcript and _belongs(transcript.cwd, where)]


def _rollouts(root: Path, say: Callable[[str], object]) -> Iterator[os.DirEntry[str]]:
    """Every `rollout-*.jsonl` under `root` (`YYYY/MM/DD/`, or flat as the first releases kept them)."""
    folders = [root]
    while folders:
        for entry in _entries(folders.pop(), say):
            if entry.is_dir(follow_symlinks=False):
                folders.append(Path(entry.path))
            elif entry.name.startswith("rollout-") and entry.name.endswith(".jsonl"):
                if entry.is_file(follow_symlinks=False):
                    yield entry


def _codex_transcript(where: str, say: Callable[[str], object]) -> TerminalTranscript | None:
    path = Path(where)
    head = _read_head(where, say)
    if head is None:
        return None
    records, rest = head
    first = records[0] if records else None
    prompt = next(filter(None, map(_codex_prompt, records[1:])), None)
    meta: dict[str, Any] = {}
    if first is None and b'"session_meta"' in rest[:256]:  # a first line cut by the bound
        meta = {key: _field(rest, key) for key in ("id", "cwd", "timestamp")}
    elif first is not None and first.get("type") == "session_meta" and isinstance(first.get("payload"), dict):
        meta = first["payload"]
    elif first is not None and "id" in first and "type" not in first:
        meta = first  # the first releases' header: no working directory in it
    cwd, cli_id = meta.get("cwd"), meta.get("id")
    if not isinstance(cli_id, str) or not cli_id:
        say(f"{visible(str(path))}: no session_meta on its first line: not a Codex rollout (skipped)")
        return None
    if not isinstance(cwd, str) or not cwd:
        return None  # (the first releases kept no working directory: no project to belong to)
    started = normalize_ts(meta.get("timestamp"))
    parent, agent = _codex_parent(meta)
    return TerminalTranscript(
        cli="codex",
        path=path,
        cli_id=cli_id,
        session_id=session_id_for(cli_id),
        cwd=cwd,
        title=None if parent else _short(prompt),  # (a sub-agent's head repeats its parent's prompt)
        started=started,
        modified_ns=_mtime(path),
        parent_cli_id=parent,
        agent_name=agent,
    )


def _codex_parent(meta: dict[str, Any]) -> tuple[str | None, str | None]:
    """A sub-agent rollout's parent thread and name (`source.subagent.thread_spawn`)."""
    source = meta.get("source")
    sub = source.get("subagent") if isinstance(source, dict) else None
    spawn = sub.get("thread_spawn") if isinstance(sub, dict) else None
    if not isinstance(spawn, dict):
        return None, None
    parent = spawn.get("parent_thread_id")
    name = spawn.get("agent_role") or spawn.get("agent_nickname")
    return (parent if isinstance(parent, str) else None), (name if isinstance(name, str) else None)


def _codex_prompt(record: dict[str, Any]) -> str | None:
    """The text of a rollout's `user_message` event (the prompt as typed), if `record` is one."""
    payload = record.get("payload")
    if (
        record.get("type") != "event_msg"
        or not isinstance(payload, dict)
        or payload.get("type") != "user_message"
    ):
        return None
    message = payload.get("message")
    if not isinstance(message, str) or not message.strip() or message.lstrip().startswith(_NOT_PROMPTS):
        return None
    return message


# -- reading heads --------------------------------------------------------------------------------
def _entries(folder: Path, say: Callable[[str], object]) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as entries:
            return list(entries)
    except FileNotFoundError:
        return []
    except OSError as error:
        say(f"{visible(str(folder))}: {error.strerror or error} (skipped)")
        return []


def _read_head(
    path: str, say: Callable[[str], object], *, lines: int = HEAD_LINES
) -> tuple[list[dict[str, Any]], bytes] | None:
    """The decoded whole lines of a file's head (up to `lines`), and what follows them (a line cut
    by the bound: its fields are looked for as text); None (said) if it cannot be read."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(FIRST_READ)
            if b"\n" not in data and len(data) == FIRST_READ:
                data += handle.read(HEAD_BYTES - FIRST_READ)
    except OSError as error:
        say(f"{visible(path)}: {error.strerror or error} (skipped)")
        return None
    records: list[dict[str, Any]] = []
    start = 0
    while len(records) < lines:
        end = data.find(b"\n", start)
        if end < 0:
            break
        line = data[start:end]
        start = end + 1
        if not line.strip():
            continue
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError:
            if not records:
                say(f"{visible(path)}: its first line is not JSON (skipped)")
                return None
            continue
        if isinstance(record, dict):
            records.append(record)
    rest = data[start:]
    if not records and not rest:
        return None  # empty: a session just starting (nothing to say about it yet)
    return records, rest


def _field(data: bytes, key: str) -> str | None:
    """A string field found in a cut line's text (a head too long to decode whole)."""
    match = _FIELD[key].search(data)
    if match is None:
        return None
    try:
        value = orjson.loads(b'"' + match.group(1) + b'"')
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, str) else None


def _mtime(path: Path) -> int:
    try:
        return os.lstat(path).st_mtime_ns
    except OSError:
        return 0


def _short(text: str | None) -> str | None:
    return one_line(text, TITLE_CHARS) if text is not None else None


# -- our hooks in the CLIs' settings -----------------------------------------------------------------
HOOK_MODULE = b"agent_tui.terminal.hook_client"
"""What every hook command agent-tui installs runs (`python -I -m agent_tui.terminal.hook_client`)."""
SETTINGS_BYTES = 1024 * 1024


def hook_files(project: Path) -> list[Path]:
    """The CLIs' settings files agent-tui's hooks are installed into, the user's and `project`'s."""
    claude, codex = default_dir("claude").parent, default_dir("codex").parent
    return [
        claude / "settings.json",
        claude / "settings.local.json",
        project / ".claude" / "settings.local.json",
        project / ".claude" / "settings.json",
        codex / "hooks.json",
        project / ".codex" / "hooks.json",
    ]


def hooks_installed(project: Path) -> bool:
    """Whether one of the CLIs' settings files (`hook_files`) holds a hook command of agent-tui's
    (it names `HOOK_MODULE`); only plain files are read, at most `SETTINGS_BYTES` of each."""
    for path in hook_files(project):
        try:
            if not path.is_file() or path.is_symlink():
                continue
            with path.open("rb") as handle:
                if HOOK_MODULE in handle.read(SETTINGS_BYTES):
                    return True
        except OSError:
            continue
    return False
