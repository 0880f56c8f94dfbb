"""The vocabulary shared by both directions: ACP tool kinds and stop reasons against ours.

Pure tables and functions, no I/O. `docs/acp.md` shows the same tables as prose; a test holds
the two in step.

Invariants:
- every ACP tool kind has exactly one risk (`RISK_OF_KIND`), and an `execute` call whose raw
  input names a command is classified by the same shell classifier as our own `shell` tool;
- every ACP stop reason maps to one of our stop reasons, and each of ours but `error` maps back
  (an error is a JSON-RPC error in ACP, not a stop reason);
- text is taken from content blocks without loss where the block is text (text blocks, embedded
  text resources); other blocks yield None and the caller keeps them as `source.record`;
- a tool result's text is its content's text, else the first of the known output fields of its
  raw output (`OUTPUT_KEYS`, then `stdout`/`stderr`, then `metadata.output`), and its raw output
  as JSON only when it has none of them; an exit code is read only where an agent reports one
  (`exit_code_of`), never made up.
"""

from __future__ import annotations

import difflib
import re
import shlex
from collections.abc import Iterable, Mapping
from pathlib import PurePosixPath
from typing import Any, TypeGuard

import orjson
from acp.schema import (
    AudioContentBlock,
    ContentToolCallContent,
    EmbeddedResourceContentBlock,
    FileEditToolCallContent,
    ImageContentBlock,
    ResourceContentBlock,
    TerminalToolCallContent,
    TextContentBlock,
    TextResourceContents,
    ToolCallProgress,
    ToolCallStart,
    Usage,
)

from agent_tui.engine.permissions import classify_shell
from agent_tui.events.model import Risk
from agent_tui.events.model import Usage as TokenUsage
from agent_tui.events.terminal_text import one_line as terminal_one_line

ContentBlock = (
    TextContentBlock
    | ImageContentBlock
    | AudioContentBlock
    | ResourceContentBlock
    | EmbeddedResourceContentBlock
)
ToolContent = ContentToolCallContent | FileEditToolCallContent | TerminalToolCallContent

RECORD_FORMAT = "acp"
"""`source.record{format}` of everything an ACP agent sent that our events cannot say."""

RISK_OF_KIND: dict[str, Risk] = {
    "read": "read",
    "search": "read",
    "edit": "write",
    "move": "write",
    "delete": "destructive",
    "execute": "execute",
    "fetch": "network",
    "think": "execute",
    "switch_mode": "execute",
    "other": "execute",
}
"""ACP `ToolKind` → our risk (an unknown or missing kind counts as `other`)."""

KIND_OF_TOOL: dict[str, str] = {
    "read_file": "read",
    "list_dir": "search",
    "grep": "search",
    "write_file": "edit",
    "edit_file": "edit",
    "shell": "execute",
    "spawn_agent": "other",
    "wait_agent": "other",
}
"""Our tool → ACP `ToolKind` (what `agent-tui acp` reports; unknown tools are `other`)."""

STOP_REASON_OF_ACP: dict[str, tuple[str, str | None]] = {
    "end_turn": ("final", None),
    "max_tokens": ("final", "the agent's model reached its output token limit"),
    "max_turn_requests": ("max_steps", None),
    "refusal": ("final", "the agent refused to continue"),
    "cancelled": ("cancelled", None),
}
"""ACP `StopReason` → (our `stopReason`, the `turn.completed.message` that says what it was)."""

COMMAND_KEYS = ("command", "cmd")
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh"})
"""Shells whose `-c SCRIPT` (or `-lc SCRIPT`) runs the script as the command."""
OUTPUT_KEYS = ("output", "aggregated_output", "formatted_output")
"""Fields of a raw tool output that hold its text, first found first (opencode and Vibe say
`output`, Codex `aggregated_output` and `formatted_output`, beside `stdout`/`stderr`)."""
EXIT_KEYS = ("exitCode", "exit_code")
"""Fields of a raw tool output that hold the exit code (Codex says `exit_code`)."""
PREVIEW_CHARS = 120
_ONE_BLOCK = re.compile(r"\A```[\w.+-]*\n(?P<body>(?:(?!```)[\s\S])*?)\n?```\s*\Z")
"""A text that is one fenced code block and nothing else (its body holds no fence)."""


def unfenced(text: str) -> str:
    """A result that is one fenced block (Claude's adapter wraps a command's output in
    ```` ```console ````) as the output it holds; any other text as it is."""
    found = _ONE_BLOCK.match(text)
    return found["body"] + "\n" if found is not None and found["body"] else text


def tool_name_for(kind: str | None) -> str:
    """The `tool` our log gives an ACP tool call: its kind (`other` when it has none)."""
    return kind if kind in RISK_OF_KIND else "other"


def risk_for(kind: str | None, raw_input: Any) -> tuple[Risk, str]:
    """The risk of an ACP tool call and a few words saying why.

    An `execute` call whose raw input carries a command string is classified like our own
    `shell` tool (so `rm -rf x` is destructive, `ls` is read); anything else by its kind.
    """
    name = tool_name_for(kind)
    if name == "execute":
        command = command_of(raw_input)
        if command is not None:
            return classify_shell(command), "classified from its command"
    return RISK_OF_KIND[name], f"ACP tool kind {name}"


def command_of(raw_input: Any) -> str | None:
    """The command line an agent's raw tool input names (`command` or `cmd`), if any.

    A list is an argument vector, joined as a shell would read it; a shell running a script
    (`["/bin/bash", "-lc", SCRIPT]`, as Codex runs every command) is that script, the command
    the model wrote.
    """
    if not isinstance(raw_input, Mapping):
        return None
    for key in COMMAND_KEYS:
        value = raw_input.get(key)
        if isinstance(value, str) and value.strip():
            return value
        if isinstance(value, list) and value and all(isinstance(part, str) for part in value):
            if _runs_script(value):
                return str(value[2])
            return shlex.join(value)
    return None


def _runs_script(argv: list[str]) -> bool:
    shell, flag = PurePosixPath(argv[0]).name, argv[1] if len(argv) > 1 else ""
    return (
        len(argv) >= 3
        and shell in SHELLS
        and flag.startswith("-")
        and not flag.startswith("--")
        and "c" in flag
        and bool(argv[2].strip())
    )


def kind_for_tool(tool: str) -> str:
    return KIND_OF_TOOL.get(tool, "other")


def stop_reason_from_acp(stop_reason: str) -> tuple[str, str | None]:
    """(our stop reason, message) for an ACP stop reason; an unknown one ends the turn `final`."""
    return STOP_REASON_OF_ACP.get(stop_reason, ("final", f"the agent stopped: {stop_reason}"))


def token_usage(usage: Usage | None, meta: Any = None) -> TokenUsage | None:
    """ACP prompt usage as our `Usage` (None when the agent reported none; no cached tokens
    reported, or none cached, leave `cachedTokens` out).

    `meta`: the prompt answer's `_meta`; without `usage`, its `quota.token_count`
    (`input_tokens`, `output_tokens`: where Gemini CLI reports a turn's tokens) is the usage.
    """
    if usage is None:
        quota = meta.get("quota") if isinstance(meta, Mapping) else None
        counted = quota.get("token_count") if isinstance(quota, Mapping) else None
        if isinstance(counted, Mapping):
            prompt, completion = counted.get("input_tokens"), counted.get("output_tokens")
            if _is_int(prompt) and _is_int(completion):
                return TokenUsage(promptTokens=prompt, completionTokens=completion)
        return None
    return TokenUsage(
        promptTokens=usage.input_tokens,
        completionTokens=usage.output_tokens,
        cachedTokens=usage.cached_read_tokens or None,
    )


def acp_usage(payload: Mapping[str, Any] | None) -> Usage | None:
    """Our `turn.completed.usage` as ACP prompt usage."""
    if not payload:
        return None
    tokens = TokenUsage.model_validate(payload)
    return Usage(
        total_tokens=tokens.promptTokens + tokens.completionTokens,
        input_tokens=tokens.promptTokens,
        output_tokens=tokens.completionTokens,
        cached_read_tokens=tokens.cachedTokens,
    )


# -- content ------------------------------------------------------------------------------------
def text_of_block(block: ContentBlock) -> str | None:
    """The text of a content block, or None for one that is not text (image, audio, link)."""
    if isinstance(block, TextContentBlock):
        return block.text
    if isinstance(block, EmbeddedResourceContentBlock) and isinstance(block.resource, TextResourceContents):
        return block.resource.text
    return None


def prompt_text(blocks: Iterable[ContentBlock]) -> str:
    """A client's prompt as the one text our engine takes.

    Text blocks are joined as they are; an embedded text resource is included under its URI;
    a resource link is named by its URI (our tools can read it if it lies in the session's
    directory). Images and audio are not supported (the server does not advertise them).
    """
    parts: list[str] = []
    for block in blocks:
        if isinstance(block, TextContentBlock):
            parts.append(block.text)
        elif isinstance(block, EmbeddedResourceContentBlock):
            resource = block.resource
            text = resource.text if isinstance(resource, TextResourceContents) else "(binary content)"
            parts.append(f"\n<resource uri={resource.uri!r}>\n{text}\n</resource>\n")
        elif isinstance(block, ResourceContentBlock):
            parts.append(f"@{block.uri}")
    return "".join(parts)


def text_of_tool_content(content: Iterable[ToolContent] | None) -> str:
    """What a person reads of a tool call's content: its text, diffs as unified diffs.

    Terminal references are named (`[terminal term_1]`); their output is the terminal's own
    call in our log.
    """
    parts: list[str] = []
    for item in content or ():
        if isinstance(item, ContentToolCallContent):
            text = text_of_block(item.content)
            parts.append(text if text is not None else f"[{item.content.type}]")
        elif isinstance(item, FileEditToolCallContent):
            parts.append(unified_diff(item.path, item.old_text, item.new_text))
        elif isinstance(item, TerminalToolCallContent):
            parts.append(f"[terminal {item.terminal_id}]")
    return "\n".join(part for part in parts if part)


def unified_diff(path: str, old_text: str | None, new_text: str) -> str:
    """A file edit as a unified diff (a new file when `old_text` is None)."""
    old = (old_text or "").splitlines(keepends=True)
    new = new_text.splitlines(keepends=True)
    before = path if old_text is not None else "/dev/null"
    lines = difflib.unified_diff(old, new, fromfile=before, tofile=path)
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def as_sent(update: Any) -> dict[str, Any]:
    """An SDK model as it was (or will be) on the wire: JSON names, no empty fields."""
    data: dict[str, Any] = update.model_dump(mode="json", by_alias=True, exclude_none=True)
    return data


def one_line(text: str, limit: int = PREVIEW_CHARS) -> str:
    """`text` on one line, cut to `limit` characters with `…` (a tool call's title)."""
    return terminal_one_line(text, limit)


def compact_json(value: Any) -> str:
    return orjson.dumps(value, default=str).decode()


def carries_more_than_progress(update: ToolCallStart | ToolCallProgress) -> bool:
    """Whether an update of a known call says more than its status and text output (its
    `_meta` too: Claude's adapter sends a command's output and exit there)."""
    if update.title or update.kind or update.locations or update.raw_input is not None or update.field_meta:
        return True
    return any(getattr(item, "type", "content") != "content" for item in update.content or ())


# -- tool results -------------------------------------------------------------------------------
def has_input(raw_input: Any) -> bool:
    """Whether a tool call's raw input says anything (an agent may send `{}` before the input
    streamed)."""
    return raw_input is not None and raw_input != {} and raw_input != [] and raw_input != ""


def text_of_raw_output(raw_output: Any) -> str | None:
    """The text of a tool's raw output, or None when it holds no known text field.

    A string is its own text; a list of text blocks is their text; a mapping gives the first
    of `OUTPUT_KEYS`, else `stdout` and `stderr` (either, joined by a newline), else
    `metadata.output`. A field that is there but empty is the empty text (a command that
    printed nothing), not a reason to show JSON.
    """
    if isinstance(raw_output, str):
        return raw_output
    if isinstance(raw_output, list):
        texts = [
            item["text"]
            for item in raw_output
            if isinstance(item, Mapping) and item.get("type") == "text" and isinstance(item.get("text"), str)
        ]
        return "".join(texts) if texts else None
    if not isinstance(raw_output, Mapping):
        return None
    for key in OUTPUT_KEYS:
        value = raw_output.get(key)
        if isinstance(value, str):
            return value
    streams = [raw_output[key] for key in ("stdout", "stderr") if isinstance(raw_output.get(key), str)]
    if streams:
        return "\n".join(stream for stream in streams if stream)
    metadata = raw_output.get("metadata")
    if isinstance(metadata, Mapping) and isinstance(metadata.get("output"), str):
        return str(metadata["output"])
    return None


def exit_code_of(raw_output: Any, meta: Any = None) -> int | None:
    """The exit code an agent reports for a call: `exitCode` or `exit_code` of its raw output,
    `metadata.exit` (opencode), or `terminal_exit.exit_code` in the raw output's or the
    update's `_meta` (Claude's adapter); None when it reports none."""
    metas: list[Any] = [meta]
    if isinstance(raw_output, Mapping):
        for key in EXIT_KEYS:
            if _is_int(raw_output.get(key)):
                return int(raw_output[key])
        metadata = raw_output.get("metadata")
        if isinstance(metadata, Mapping) and _is_int(metadata.get("exit")):
            return int(metadata["exit"])
        metas.append(raw_output.get("_meta"))
    for found in metas:
        if isinstance(found, Mapping):
            terminal_exit = found.get("terminal_exit")
            if isinstance(terminal_exit, Mapping) and _is_int(terminal_exit.get("exit_code")):
                return int(terminal_exit["exit_code"])
    return None


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def is_output(content: Iterable[ToolContent] | None, *, running: bool) -> bool:
    """Whether a tool call's content shows it running: a terminal, or text once the call runs
    (`running`: the agent said `in_progress`, not in the update that announced the call). Text
    before that describes the call (Claude's adapter sends the command's description, Vibe the
    command); a diff is what the call would do, not what it did."""
    kinds = ContentToolCallContent | TerminalToolCallContent if running else TerminalToolCallContent
    return any(isinstance(item, kinds) for item in content or ())
