"""Why a line is not JSON, in our words: what is wrong and at which column, never the parser's.

The JSON parser's own messages (`invalid literal, expected 'null': line 1 column 7 (char 6)`)
name its grammar, not what a person wrote. `json_problem` says the same thing the way the rest
of agent-tui speaks: `not JSON at column 7: a bare word where a value belongs (only true, false
and null go without quotes)`. Every reader of JSON lines (the log store, the replay, the
scenario and rules files) uses it, and adds the `FILE:LINE` in front.

Invariants:
- the sentence starts with `not JSON`, names the column when the parser gave one (and the line,
  past the first: a file of several lines), and holds no
  text of the line itself (a line may be hostile or huge);
- a parser message this module does not know still reads as `not JSON at column N`, with no
  parser wording.
"""

from __future__ import annotations

_REASONS: tuple[tuple[str, str], ...] = (
    ("invalid literal", "a bare word where a value belongs (only true, false and null go without quotes)"),
    ("trailing comma", "a comma before a closing bracket"),
    ("expected a string key", "an object key without double quotes"),
    ("expected ':'", "a key without a ':' after it"),
    ("expected ',' or", "two values without a ',' between them"),
    ("expected a JSON value", "something that is not a JSON value (a string needs double quotes)"),
    ("unexpected end of data", "the line ends in the middle of a value (cut off?)"),
    ("control character in string", "a raw control character inside a string"),
    ("content after document", "more after the end of the value"),
    ("not valid UTF-8", "bytes that are not UTF-8 text"),
    ("surrogate", "a broken \\u escape (half of a surrogate pair)"),
    ("escaped sequence", "a backslash escape JSON does not have"),
    ("leading zero", "a number with a leading zero"),
    ("digit", "a number with no digits where they belong"),
    ("zero-length", "nothing at all"),
    # The standard library's words: asked when the parser said no more than "unexpected
    # character" (older orjson releases do).
    ("Expecting property name", "an object key without double quotes"),
    ("Expecting ':'", "a key without a ':' after it"),
    ("Expecting ',' delimiter", "two values without a ',' between them"),
    ("Expecting value", "something that is not a JSON value (a string needs double quotes)"),
    ("Extra data", "more after the end of the value"),
    ("Invalid control character", "a raw control character inside a string"),
    ("Unterminated string", "the line ends in the middle of a value (cut off?)"),
)


def json_problem(error: ValueError) -> str:
    """`error` (a `JSONDecodeError` of orjson or json) as one sentence of ours."""
    message = str(error.args[0]) if error.args else str(error)
    column = getattr(error, "colno", None)
    line = getattr(error, "lineno", None)
    where = f" at column {column}" if isinstance(column, int) and column > 0 else ""
    if where and isinstance(line, int) and line > 1:  # a file of several lines (a scenario, rules)
        where = f" at line {line}, column {column}"
    if message.startswith("unexpected character") and "expected" not in message[10:]:
        message = _plainer(error) or message
    reason = next((ours for theirs, ours in _REASONS if theirs in message), None)
    return f"not JSON{where}" + (f": {reason}" if reason else "")


def _plainer(error: ValueError) -> str | None:
    """What the standard library's parser says of the same text (its words are specific where
    some orjson releases only say "unexpected character"), or None."""
    import json

    document = getattr(error, "doc", None)
    if not isinstance(document, str):
        return None
    try:
        json.loads(document)
    except json.JSONDecodeError as plain:
        return str(plain.msg)
    except (ValueError, RecursionError):
        return None
    return "Expecting value"  # the library takes NaN and Infinity, which JSON does not have
