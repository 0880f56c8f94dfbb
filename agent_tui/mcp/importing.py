"""`agent-tui mcp import`: the servers of a `.mcp.json` (Claude Code's and others' file) as
`[mcp.NAME]` tables of our config file.

Invariants:
- nothing is imported from a file that holds a literal value where a variable belongs (an
  `env` value, or a secret-looking header without `${NAME}`): the import is refused with, for
  each, the line to put in the environment instead and the place in the file; the value itself
  is never repeated;
- `env` values `${NAME}` (or `$NAME`) that name their own variable become `env = ["NAME"]`;
  headers keep their `${NAME}` references, filled from the environment when the server is reached;
- every server of the file is checked as the config file's tables are (`check_server`), so what
  is written reads back the same; a server whose name is already in the config is refused;
- an imported server is for the file's own project (`projects` = the file's directory): a
  repository's servers do not start in every other directory; a model key it would be handed
  (`env`, a header's `${NAME}`) is said in a comment above its table.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agent_tui.engine.vault import KNOWN_KEY_NAMES
from agent_tui.mcp.config import NAME, REFERENCE, McpConfigError, check_server, is_secret_header

__all__ = ["McpImportError", "imported_tables"]

_OWN_REFERENCE = re.compile(r"^\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?$")


class McpImportError(ValueError):
    """The file cannot be imported; the message says where and what to do, over several lines."""


def imported_tables(path: Path, existing: Mapping[str, Any]) -> str:
    """The TOML text of the `[mcp.NAME]` tables for every server of `path`.

    Args:
        existing: the servers the config file has already (their names are refused).

    Raises:
        McpImportError: the file is not a `.mcp.json`, a server cannot be used, or it holds
            literal values (the message lists the lines to move into the environment).
    """
    text, servers = _read_servers(path)
    moves: list[str] = []
    tables: list[str] = []
    for name, server in servers.items():

        def where(*keys: str, server_name: str = name) -> str:
            return f"{path}:{_line_of(text, server_name, *keys)}"

        if not isinstance(name, str) or not NAME.match(name):
            raise McpImportError(
                f"{where()}: {name!r}: a server's name may use letters, digits, '-' and single '_' "
                "between them only"
            )
        if name in existing:
            raise McpImportError(f"{where()}: the config file has a server named {name} already")
        if not isinstance(server, dict):
            raise McpImportError(f"{where()}: {name}: expected an object with command or url")
        table, found = _table(name, server, where)
        if found:
            moves.extend(found)
            continue
        table["projects"] = [str(path.resolve().parent)]  # the file's project, as its tools assume
        try:
            check_server(name, table, lambda key=None: where(*(key,) if key else ()))
        except McpConfigError as error:
            raise McpImportError(str(error)) from None
        tables.append(_model_key_notes(name, table) + _toml(name, table))
    if moves:
        raise McpImportError(
            f"{path} holds values agent-tui never keeps in its config; put them in your environment "
            '(your shell\'s profile, a secrets manager), write them in the file as "${NAME}", and '
            "import again:\n" + "\n".join(moves)
        )
    return "\n".join(tables)


def _read_servers(path: Path) -> tuple[str, dict[Any, Any]]:
    """The file's text and its `mcpServers` object (not empty)."""
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text)
    except OSError as error:
        raise McpImportError(f"{path}: {error.strerror or error}") from None
    except UnicodeDecodeError:
        raise McpImportError(f"{path}: not UTF-8 text") from None
    except json.JSONDecodeError as error:
        raise McpImportError(f"{path}:{error.lineno}: not JSON: {error.msg}") from None
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict) or not servers:
        raise McpImportError(f'{path}: no "mcpServers" object with servers in it')
    return text, servers


def _table(name: str, server: dict[str, Any], where: Any) -> tuple[dict[str, Any], list[str]]:
    """Our table for one server, and the lines to move into the environment."""
    kind = server.get("type", "stdio" if "command" in server else "http")
    if kind == "sse":
        raise McpImportError(
            f"{where('type')}: {name}: SSE servers are not supported (streamable HTTP and stdio are)"
        )
    table: dict[str, Any] = {}
    moves: list[str] = []
    if "command" in server:
        table["command"] = server["command"]
        if server.get("args"):
            table["args"] = server["args"]
    if "url" in server:
        table["url"] = server["url"]
    env = server.get("env") or {}
    if not isinstance(env, dict):
        raise McpImportError(f"{where('env')}: {name}.env: expected an object of variables")
    for variable, value in env.items():
        own = _OWN_REFERENCE.match(str(value))
        if own is None or own.group(1) != variable:  # else its value is already `${VARIABLE}`
            moves.append(f"  export {variable}=...   # the value at {where('env', variable)}")
    if env:
        table["env"] = list(env)
    headers = server.get("headers") or {}
    if not isinstance(headers, dict):
        raise McpImportError(f"{where('headers')}: {name}.headers: expected an object of headers")
    kept: dict[str, str] = {}
    for header, value in headers.items():
        value = str(value)
        if is_secret_header(header) and not REFERENCE.search(value):
            variable = re.sub(r"[^A-Za-z0-9_]", "_", f"{name}_{header}").upper()
            moves.append(
                f"  export {variable}=...   # the value of header {header} at {where('headers', header)};"
                f' then write it as "${{{variable}}}"'
            )
        kept[header] = value
    if kept:
        table["headers"] = kept
    return table, moves


def _model_key_notes(name: str, table: Mapping[str, Any]) -> str:
    """A TOML comment for each model key the table hands the server (by `env`, or a header's
    `${NAME}`): agent-tui keeps those from its tools, and a file from a repository may ask for
    them; the user reads it here, in the file and in what the import prints."""
    named = list(table.get("env", ()))
    for value in (table.get("headers") or {}).values():
        named += REFERENCE.findall(value)
    return "".join(
        f"# note: this gives {variable}, a model key agent-tui keeps from its tools, to {name}; "
        "remove it unless the server needs it\n"
        for variable in dict.fromkeys(named)
        if variable in KNOWN_KEY_NAMES
    )


def _line_of(text: str, server: str, *keys: str) -> int:
    """The line of `"server"` and then of each key after it (a locator, not a parser)."""
    offset = text.find(json.dumps(server))
    if offset < 0:
        return 1
    for key in keys:
        found = text.find(json.dumps(key), offset)
        if found < 0:
            break
        offset = found
    return text.count("\n", 0, offset) + 1


def _toml(name: str, table: Mapping[str, Any]) -> str:
    """One `[mcp.NAME]` table; strings are written as JSON strings, which TOML reads the same."""
    lines = [f"[mcp.{name}]"]
    for key, value in table.items():
        if isinstance(value, dict):
            inner = ", ".join(f"{_string(k)} = {_string(v)}" for k, v in value.items())
            lines.append(f"{key} = {{ {inner} }}")
        else:
            lines.append(f"{key} = {_string(value)}")
    return "\n".join(lines) + "\n"


def _string(value: Any) -> str:
    """A JSON value TOML reads the same (non-ASCII kept as is: TOML has no surrogate escapes)."""
    return json.dumps(value, ensure_ascii=False)
