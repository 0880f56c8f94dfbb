"""The rules a person gave: what a remembered answer covers (`RememberKey`), one "always" rule
(`PermissionRule`), and reading a rules file (`parse_rules`).

Both the user's own rules file and a project's rules file (`project_rules`) are read here, so the
permission engine and the project's rules share one format and one error. Invariants:
- a remembered answer covers only calls with the same key: the tool, the risk, and for `shell`
  the set of program names of the command;
- when several rules match, a deny wins (`first_match`);
- a malformed file raises `PermissionRulesError` naming the file and the field.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agent_tui.events.json_words import json_problem
from agent_tui.events.model import Risk
from agent_tui.private_files import write_private
from agent_tui.safety import shell_programs

__all__ = [
    "PermissionRule",
    "PermissionRulesError",
    "RememberKey",
    "as_mapping",
    "first_match",
    "parse_rules",
]


class PermissionRulesError(Exception):
    """The rules file cannot be used; the message names the file and what is wrong."""

    def __init__(self, path: Path | str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = Path(path)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class RememberKey:
    """What a remembered answer covers.

    `programs` is set for `shell` only: the sorted program names of the command
    (`shell_programs`), so an answer for `ls src` also covers `ls -la` at the same risk, but not
    `rm x` nor `ls; rm x`. For every other tool it is None: the answer covers the tool at that
    risk, whatever the arguments.
    """

    tool: str
    risk: Risk
    programs: tuple[str, ...] | None = None

    @classmethod
    def of(cls, tool: str, args: Mapping[str, Any] | BaseModel, risk: Risk) -> RememberKey:
        if tool == "shell":
            cmd = as_mapping(args).get("cmd")
            return cls(tool, risk, shell_programs(cmd if isinstance(cmd, str) else ""))
        return cls(tool, risk)


class PermissionRule(BaseModel):
    """One "always" rule of the rules file. A field left out matches anything."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tool: str
    risk: Risk | None = None
    programs: list[str] | None = None
    decision: Literal["allow", "deny"]
    example: str | None = None

    def matches(self, key: RememberKey) -> bool:
        if self.tool != key.tool or (self.risk is not None and self.risk != key.risk):
            return False
        if self.programs is None:
            return True
        return tuple(sorted(set(self.programs))) == (key.programs or ())

    def same_key(self, key: RememberKey) -> bool:
        programs = tuple(sorted(set(self.programs))) if self.programs is not None else None
        return (self.tool, self.risk, programs) == (key.tool, key.risk, key.programs)


class _RulesFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: Literal[1] = 1
    project: str | None = None  # whose rules these are (the user's files name their project)
    rules: list[PermissionRule] = Field(default_factory=list)


def parse_rules(path: Path, raw: bytes) -> list[PermissionRule]:
    """The rules of a rules file's bytes (an empty file has none).

    Raises:
        PermissionRulesError: not JSON, or not a rules file; the message names `path` and the
            field (`rules[0].decision: …`).
    """
    if not raw.strip():
        return []
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as error:
        raise PermissionRulesError(path, json_problem(error)) from None
    try:
        return list(_RulesFile.model_validate(data).rules)
    except ValidationError as error:
        raise PermissionRulesError(path, _describe(error)) from None


def write_document(path: Path, document: Mapping[str, Any]) -> None:
    """Write a rules or acceptances file whole, indented.

    Raises:
        PermissionRulesError: it cannot be written.
    """
    try:
        write_private(path, orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n")
    except OSError as error:
        raise PermissionRulesError(path, f"cannot write ({error.strerror})") from None


def as_mapping(args: Mapping[str, Any] | BaseModel) -> Mapping[str, Any]:
    return args.model_dump() if isinstance(args, BaseModel) else args


def _describe(error: ValidationError) -> str:
    first = error.errors()[0]
    return f"{field_path(first['loc']) or 'file'}: {first['msg']}"


def field_path(loc: Sequence[Any]) -> str:
    """Where a pydantic error is, as a person writes it: `rules[0].decision`."""
    where = ""
    for part in loc:
        where += f"[{part}]" if isinstance(part, int) else (f".{part}" if where else str(part))
    return where


def file_signature(path: Path) -> tuple[int, int, int, int] | None:
    """What changes when a rules file is rewritten (times, size, inode); None: there is none.

    Raises:
        OSError: the file is there but cannot be looked at (not `FileNotFoundError`).
    """
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None
    return (info.st_mtime_ns, info.st_ctime_ns, info.st_size, info.st_ino)


def first_match(rules: Sequence[PermissionRule], key: RememberKey) -> PermissionRule | None:
    """The rule that decides `key`: a matching deny before a matching allow."""
    matching = [rule for rule in rules if rule.matches(key)]
    if not matching:
        return None
    denials = [rule for rule in matching if rule.decision == "deny"]
    return denials[0] if denials else matching[0]
