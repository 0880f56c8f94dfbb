"""The shell parser adapter: a command line, through tree-sitter-bash, into simple commands.

A `ParsedScript` is what the risk rules need and nothing more: every simple command found
anywhere in the line (inside subshells, loops, substitutions and heredoc lines too), each as its
words, the assignments before it and its redirections; the shell constructs the line uses beyond
plain commands joined by `&&`, `||`, `;`, `|` and newlines; and the problems that make the line
impossible to judge (syntax errors, missing tokens, control characters, nesting too deep).

Invariants:
- a `Word` is literal only when its value is known from the text alone: quotes removed,
  backslash escapes resolved, no expansion of any kind (variables, command substitution,
  arithmetic with variables, globs, braces, tilde, `$'…'`); otherwise `expansions` names the
  kinds and `value` is the best reading we have;
- nothing is dropped silently: a node the adapter does not know becomes a `Construct` (the
  classifier lifts it to at least `execute`), and its children are still searched for commands;
- a line with parse errors still yields the commands tree-sitter could make out, plus a problem,
  so a broken line is never judged lower than the commands it visibly contains;
- the tree-sitter parser is created once per thread and reused.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from functools import lru_cache

import tree_sitter_bash
from tree_sitter import Language, Node, Parser

from agent_tui.safety.shell_words import (
    BRACE,
    Word,
    bare_word,
    expanding_characters,
    names,
    shape,
    unescape_double_quoted,
)

__all__ = ["Assignment", "Construct", "ParsedScript", "Redirect", "SimpleCommand", "Word", "parse_shell"]

_LANGUAGE = Language(tree_sitter_bash.language())
_LOCAL = threading.local()
_MAX_DEPTH = 120
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


@dataclass(frozen=True, slots=True)
class Assignment:
    """`NAME=value` (or `NAME+=value`, `NAME[i]=value`) before a command or on its own."""

    name: str
    value: Word


@dataclass(frozen=True, slots=True)
class Redirect:
    """A redirection: the operator (`>`, `>>`, `<`, `2>&1` is `>&` with fd 2, `<<`, …)."""

    operator: str
    fd: str | None
    target: Word | None  # None for heredocs and `>&-`-style closes
    source: str


@dataclass(frozen=True, slots=True)
class SimpleCommand:
    """A simple command. `words` may be empty: a line of assignments or redirections only."""

    words: tuple[Word, ...]
    assignments: tuple[Assignment, ...] = ()
    redirects: tuple[Redirect, ...] = ()


@dataclass(frozen=True, slots=True)
class Construct:
    """Shell syntax beyond plain commands: `what` names it for a reason ("a subshell `( … )`")."""

    what: str


@dataclass(slots=True)
class ParsedScript:
    commands: list[SimpleCommand] = field(default_factory=list)
    constructs: list[Construct] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


MAX_PIPES = 256
"""More `|` than this and a line is not parsed (a problem, so not `read`): tree-sitter-bash takes
time quadratic in a pipeline's length (8,000 characters of `a|a|…` cost a second), and no command
a person reads in an approval pipes through hundreds of programs."""
MAX_HEREDOCS = 64
"""Likewise for `<<`: heredocs waiting for their bodies cost the parser time out of proportion."""


@lru_cache(maxsize=64)
def parse_shell(text: str) -> ParsedScript:
    """Parse a command line; never raises (problems are reported in the result).

    The result is cached by text (the classifier, the remembered-answer key and the protected-path
    check each ask for the same line) and must not be changed by its callers.
    """
    script = ParsedScript()
    if text.count("|") > MAX_PIPES:
        script.problems.append(f"more than {MAX_PIPES} pipes, too many to judge")
        return script
    if text.count("<<") > MAX_HEREDOCS:
        script.problems.append(f"more than {MAX_HEREDOCS} heredocs, too many to judge")
        return script
    control = _CONTROL.search(text)
    if control is not None:
        script.problems.append(f"control character {control.group()!r} in the command")
    # A final newline changes nothing the shell does, and spares tree-sitter-bash a slow path:
    # a pipeline of three or more commands that ends the input costs it ~30x more to parse.
    # Except after a backslash: there it would make a line continuation and could hide an error
    # the line as given has (a heredoc whose delimiter line ends in `\`).
    source = text.encode("utf-8", "surrogatepass")
    if not source.endswith(b"\\"):
        source += b"\n"
    _walk(source, script, 0)
    return script


def _walk(source: bytes, script: ParsedScript, depth: int) -> None:
    """Parse `source` and walk its tree into `script`: its commands, constructs and problems."""
    root = _parser().parse(source).root_node
    walker = _Walker(source, script)
    walker.statement(root, depth)
    walker.finish()
    if root.has_error:
        script.problems.append(_describe_error(root, source))


def _parser() -> Parser:
    parser = getattr(_LOCAL, "parser", None)
    if parser is None:
        parser = _LOCAL.parser = Parser(_LANGUAGE)
    return parser


def _describe_error(root: Node, source: bytes) -> str:
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_missing:
            return f"incomplete command: `{node.type}` is missing"
        if node.is_error:
            near = source[node.start_byte : node.end_byte].decode("utf-8", "replace").strip()
            near = near if len(near) <= 20 else near[:19] + "…"
            return f"syntax error near `{near}`" if near else "syntax error"
        stack.extend(reversed([child for child in node.children if child.has_error]))
    return "syntax error"


# Statement nodes that only group other statements; the operators between them are harmless
# except `&` (a background job), which the walker records.
_CONTAINERS = frozenset({"program", "list", "pipeline"})
_HARMLESS_TOKENS = frozenset({"&&", "||", ";", "|", "|&", "\n"})
_CONSTRUCTS = {
    "subshell": "a subshell `( … )`",
    "compound_statement": "a group `{ … }`",
    "negated_command": "a negation `!`",
    "if_statement": "an `if` statement",
    "while_statement": "a loop",
    "for_statement": "a `for` loop",
    "c_style_for_statement": "a `for` loop",
    "case_statement": "a `case` statement",
    "function_definition": "a function definition",
    "test_command": "a test `[[ … ]]`",
}
_WORD_TYPES = names(
    "word number raw_string string concatenation simple_expansion expansion command_substitution "
    "process_substitution arithmetic_expansion brace_expression ansi_c_string translated_string array"
)
_REDIRECT_TYPES = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
_ARITHMETIC_SAFE = frozenset(
    {"number", "binary_expression", "unary_expression", "parenthesized_expression", "ternary_expression"}
)


class _Walker:
    """One walk over a tree; fills the `ParsedScript` it was given."""

    def __init__(self, source: bytes, script: ParsedScript) -> None:
        self.source = source
        self.script = script
        # (quoted delimiter, the body as bash reads it, tree-sitter's body node, depth)
        self.heredocs: list[tuple[bool, str, Node | None, int]] = []

    def text(self, node: Node) -> str:
        return self.source[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def construct(self, what: str) -> None:
        self.script.constructs.append(Construct(what))

    def too_deep(self, depth: int) -> bool:
        if depth <= _MAX_DEPTH:
            return False
        if "nested too deep to judge" not in self.script.problems:
            self.script.problems.append("nested too deep to judge")
        return True

    # -- statements ----------------------------------------------------------------------------

    def statement(self, node: Node, depth: int) -> None:
        if self.too_deep(depth):
            return
        kind = node.type
        if kind in _CONTAINERS:
            for child in node.children:
                if child.is_named:
                    self.statement(child, depth + 1)
                elif child.type == "&":
                    self.construct("a background job `&`")
                elif child.type not in _HARMLESS_TOKENS:
                    self.construct(f"the operator `{child.type}`")
        elif kind == "command":
            self.command(node, (), depth)
        elif kind == "redirected_statement":
            self.redirected(node, depth)
        elif kind == "variable_assignment":
            self.script.commands.append(SimpleCommand((), (self.assignment(node, depth),)))
        elif kind == "variable_assignments":
            assignments = tuple(
                self.assignment(child, depth)
                for child in node.children
                if child.type == "variable_assignment"
            )
            self.script.commands.append(SimpleCommand((), assignments))
        elif kind in ("declaration_command", "unset_command"):
            words = tuple(self.declaration_word(child, depth) for child in node.children)
            self.script.commands.append(SimpleCommand(words))
        elif kind == "comment":
            return
        elif kind == "test_command":
            self.test_command(node, depth)
        elif kind == "ERROR":
            self.anything(node, depth)
        else:
            if kind == "compound_statement" and node.child_count and node.children[0].type == "((":
                self.construct("an arithmetic command `(( … ))`")
            else:
                self.construct(_CONSTRUCTS.get(kind, f"shell syntax `{kind}`"))
            self.anything(node, depth)

    def anything(self, node: Node, depth: int) -> None:
        """Search every child for commands: statements, words, redirections."""
        for child in node.children:
            if not child.is_named:
                if child.type == "&":
                    self.construct("a background job `&`")
                continue
            kind = child.type
            if kind in _WORD_TYPES:
                self.word(child, depth + 1)
            elif kind in _REDIRECT_TYPES:
                self.script.commands.append(SimpleCommand((), (), (self.redirect(child, depth + 1),)))
            elif kind in ("variable_name", "heredoc_body", "heredoc_content", "comment"):
                continue
            else:
                self.statement(child, depth + 1)

    def redirected(self, node: Node, depth: int) -> None:
        body = node.child_by_field_name("body")
        redirects = tuple(
            self.redirect(child, depth + 1) for child in node.children if child.type in _REDIRECT_TYPES
        )
        for child in node.children:
            if child.type == "ERROR":
                self.anything(child, depth + 1)
        if body is not None and body.type == "command":
            self.command(body, redirects, depth + 1)
            return
        if body is not None:
            self.statement(body, depth + 1)
        self.script.commands.append(SimpleCommand((), (), redirects))

    def command(self, node: Node, redirects: tuple[Redirect, ...], depth: int) -> None:
        words: list[Word] = []
        assignments: list[Assignment] = []
        extra: list[Redirect] = []
        for child in node.children:
            kind = child.type
            if kind == "variable_assignment":
                assignments.append(self.assignment(child, depth))
            elif kind == "command_name":
                name = child.children[0] if child.child_count == 1 else child
                words.append(self.word(name, depth + 1))
            elif kind in _REDIRECT_TYPES:
                extra.append(self.redirect(child, depth + 1))
            elif kind == "comment":
                continue
            elif child.is_named:
                words.append(self.word(child, depth + 1))
            else:  # an anonymous token in argument position, e.g. the `$` of `$"…"`
                text = self.text(child)
                words.append(Word(text, text, frozenset({"other"})))
        self.script.commands.append(SimpleCommand(tuple(words), tuple(assignments), redirects + tuple(extra)))

    def declaration_word(self, node: Node, depth: int) -> Word:
        if node.type == "variable_assignment":
            assignment = self.assignment(node, depth)
            value = assignment.value
            return Word(f"{assignment.name}={value.value}", self.text(node), value.expansions)
        if node.type == "variable_name" or not node.is_named:
            text = self.text(node)
            return Word(text, text)
        return self.word(node, depth + 1)

    def assignment(self, node: Node, depth: int) -> Assignment:
        name_node = node.child_by_field_name("name")
        value_node = node.child_by_field_name("value")
        name = self.text(name_node) if name_node is not None else ""
        expansions: set[str] = set()
        if name_node is not None and name_node.type == "subscript":
            expansions.add("subscript")
            self.anything(name_node, depth + 1)
            base = name_node.child_by_field_name("name")
            name = self.text(base) if base is not None else name
        value = self.word(value_node, depth + 1) if value_node is not None else Word("", "")
        if expansions:
            value = Word(value.value, value.source, value.expansions | expansions)
        return Assignment(name, value)

    def test_command(self, node: Node, depth: int) -> None:
        found = len(self.script.constructs)
        literal = self.leaves_literal(node, depth)
        if not literal and len(self.script.constructs) == found:
            self.construct("a test `[ … ]` with expansions")

    def leaves_literal(self, node: Node, depth: int) -> bool:
        literal = True
        operator = next((child for child in node.children if child.type == "test_operator"), None)
        arithmetic = operator is not None and self.text(operator) in ARITHMETIC_TESTS
        for child in node.children:
            if child.type in _WORD_TYPES:
                word = self.word(child, depth + 1)
                literal = word.literal and literal
                if word.literal and (arithmetic and not _INTEGER.fullmatch(word.value)):
                    self.construct("an arithmetic test in `[[ … ]]` (its operands are evaluated)")
                elif word.literal and subscript_with_expansion(word.value):
                    self.construct("a test of `NAME[…]` (bash expands the subscript)")
            elif child.is_named and child.type != "test_operator":
                literal = self.leaves_literal(child, depth + 1) and literal
        return literal

    # -- redirections --------------------------------------------------------------------------

    def redirect(self, node: Node, depth: int) -> Redirect:
        fd: str | None = None
        operator = ""
        target: Word | None = None
        for child in node.children:
            kind = child.type
            if kind == "file_descriptor":
                fd = self.text(child)
            elif not child.is_named and not operator:
                operator = child.type
            elif kind == "heredoc_start":
                operator = operator or "<<"
            elif kind in ("heredoc_body", "heredoc_end", "heredoc_content"):
                continue  # judged whole by `heredoc` below
            elif kind in _WORD_TYPES and target is None and node.type != "heredoc_redirect":
                target = self.word(child, depth + 1)
            elif kind in _REDIRECT_TYPES:
                self.script.commands.append(SimpleCommand((), (), (self.redirect(child, depth + 1),)))
            elif child.is_named:
                self.statement(child, depth + 1)  # the rest of a heredoc's first line
            elif child.type == "&":
                self.construct("a background job `&`")
        if node.type == "heredoc_redirect":
            self.heredoc(node, operator, depth)
        text = self.text(node) if node.type != "heredoc_redirect" else operator
        return Redirect(operator, fd, target, text)

    def heredoc(self, node: Node, operator: str, depth: int) -> None:
        """Check that bash ends the body where tree-sitter does, then search an expanding body.

        bash ends a heredoc at the first line that is its delimiter after quote removal (with
        leading tabs stripped for `<<-`). tree-sitter-bash compares the delimiter as written, so
        `<<E"O"F` or `<<$'EOF'` would let it read lines as data that bash runs as commands: a
        delimiter that is not a plain word, plainly quoted, is not judged, and neither is a body
        in which bash would stop earlier than tree-sitter does.
        """
        start = next((child for child in node.children if child.type == "heredoc_start"), None)
        end = next((child for child in node.children if child.type == "heredoc_end"), None)
        body = next((child for child in node.children if child.type == "heredoc_body"), None)
        if start is None or end is None:  # an unfinished heredoc: the parse error says so
            if body is not None:
                self.heredocs.append((False, self.text(body), body, depth))
            return
        written = self.text(start)
        delimiter = heredoc_delimiter(written)
        strip_tabs = operator == "<<-"
        first = self.line_start(body.start_byte if body is not None else end.start_byte)
        lines = self.source[first : self.line_start(end.start_byte)].decode("utf-8", "replace")
        if delimiter is None:
            self.script.problems.append(f"the heredoc delimiter `{written}` is not a plain word")
        elif not _ended(self.line_at(end.start_byte), delimiter, strip_tabs) or any(
            _ended(line, delimiter, strip_tabs) for line in lines.split("\n")[:-1]
        ):
            self.script.problems.append(f"cannot tell where the heredoc `{written}` ends")
            delimiter = None
        elif delimiter == written and any(_continued(line) for line in lines.split("\n")[:-1]):
            # bash joins a line ending in `\` to the next before it looks for the delimiter
            # (`EO\` + `F` ends the body); sh does not: the two would end it in different places.
            self.script.problems.append(f"a line of the heredoc `{written}` ends in `\\`")
            delimiter = None
        # A body we could not judge is searched as if it expanded, so it never hides a command.
        quoted = delimiter is not None and delimiter != written
        self.heredocs.append((quoted, lines, body, depth))

    def line_start(self, offset: int) -> int:
        return self.source.rfind(b"\n", 0, offset) + 1

    def line_at(self, offset: int) -> str:
        start = self.line_start(offset)
        stop = self.source.find(b"\n", offset)
        return self.source[start : stop if stop >= 0 else len(self.source)].decode("utf-8", "replace")

    def finish(self) -> None:
        """Search the heredoc bodies once the whole line is read.

        A body is data only when every heredoc of the line has a quoted delimiter: should
        tree-sitter give a body to the wrong heredoc of a line, no unquoted body is ever taken
        for a quoted one.
        """
        if all(quoted for quoted, _, _, _ in self.heredocs):
            return
        for _, text, body, depth in self.heredocs:
            if expanding_characters(text):
                self.construct("an expansion inside a heredoc")
                for command in backquoted(text):
                    self.nested(command, depth + 1)
            if body is not None:
                for child in body.children:
                    if child.type in _WORD_TYPES:
                        self.word(child, depth + 1)

    def nested(self, text: str, depth: int) -> None:
        """Search a piece of text bash runs as a command line (a backquoted heredoc part)."""
        _walk(text.encode("utf-8", "surrogatepass") + b"\n", self.script, depth)

    # -- words ---------------------------------------------------------------------------------

    def word(self, node: Node, depth: int) -> Word:
        text = self.text(node)
        if self.too_deep(depth):
            return Word(text, text, frozenset({"other"}))
        kind = node.type
        if kind == "word":
            return bare_word(text)
        if kind == "number":
            return Word(text, text)
        if kind == "raw_string":
            return Word(text[1:-1], text)
        if kind == "string":
            return self.double_quoted(node, text, depth)
        if kind == "concatenation":
            return self.concatenation(node, text, depth)
        if kind in ("simple_expansion", "expansion"):
            self.anything(node, depth)
            return Word(text, text, frozenset({"variable"}))
        if kind in ("command_substitution", "process_substitution"):
            self.construct(
                "a command substitution" if kind == "command_substitution" else "a process substitution"
            )
            self.anything(node, depth)
            return Word(text, text, frozenset({"substitution"}))
        if kind == "arithmetic_expansion":
            return Word(text, text, frozenset({self.arithmetic(node, depth)}))
        if kind == "brace_expression":
            return Word(text, text, frozenset({"brace"}))
        if kind == "ansi_c_string":
            return Word(text, text, frozenset({"ansi-c"}))
        self.anything(node, depth)
        return Word(text, text, frozenset({"other"}))

    def arithmetic(self, node: Node, depth: int) -> str:
        """`arithmetic` for numbers and operators only; `variable` when anything else is inside."""
        pure = True
        stack = [child for child in node.children if child.is_named]
        while stack:
            child = stack.pop()
            if child.type not in _ARITHMETIC_SAFE:
                pure = False
            stack.extend(grandchild for grandchild in child.children if grandchild.is_named)
        if not pure:
            self.anything(node, depth)
        return "arithmetic" if pure else "variable"

    def double_quoted(self, node: Node, text: str, depth: int) -> Word:
        parts: list[str] = []
        expansions: set[str] = set()
        for child in node.children:
            kind = child.type
            if kind == '"':
                continue
            if kind == "string_content":
                content = self.text(child)
                parts.append(unescape_double_quoted(content))
                if expanding_characters(content):  # tree-sitter left an expansion as text
                    expansions.add("other")
            elif child.is_named:
                inner = self.word(child, depth + 1)
                parts.append(inner.value)
                expansions |= inner.expansions
            else:  # a lone `$`: bash may still expand it (line continuations inside quotes)
                parts.append(self.text(child))
                expansions.add("other")
        return Word("".join(parts), text, frozenset(expansions))

    def concatenation(self, node: Node, text: str, depth: int) -> Word:
        parts: list[str] = []
        masked: list[str] = []  # unquoted characters as written; quoted ones as `x`
        expansions: set[str] = set()
        for child in node.children:
            if child.is_named:
                inner = self.word(child, depth + 1)
            else:  # an anonymous token, e.g. the `$` of `a/$"b"`, which bash drops (a translation)
                inner = Word(self.text(child), self.text(child), frozenset({"other"}))
            parts.append(inner.value)
            expansions |= inner.expansions
            masked.append(shape(inner.source) if child.type == "word" else "x" * max(len(inner.value), 1))
        if BRACE.search("".join(masked)):
            expansions.add("brace")
        return Word("".join(parts), text, frozenset(expansions))


ARITHMETIC_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})
_INTEGER = re.compile(r"[+-]?[0-9]+")


def subscript_with_expansion(value: str) -> bool:
    """`a[$(cmd)]`: bash's `test -v`, `[[ -v … ]]` and arithmetic expand such a subscript."""
    return "[" in value and ("$" in value or "`" in value)


_PLAIN_DELIMITER = re.compile(r"[A-Za-z0-9_.+\-]+")


def heredoc_delimiter(written: str) -> str | None:
    """The delimiter bash ends a heredoc at, for the plain forms only (None for any other).

    `EOF`, `'EOF'`, `"EOF"` and `\\EOF` are plain; partly quoted words (`E"O"F`), `$'…'`, empty
    and other unusual delimiters are not: tree-sitter and bash may disagree about them.
    """
    if len(written) >= 2 and written[0] == written[-1] and written[0] in "'\"":
        inner = written[1:-1]  # a blank is part of a quoted delimiter: `<<'END OF'`
        return inner if _PLAIN_DELIMITER.fullmatch(inner.replace(" ", "_")) else None
    inner = written[1:] if written.startswith("\\") else written
    return inner if _PLAIN_DELIMITER.fullmatch(inner) else None


def _continued(line: str) -> bool:
    return (len(line) - len(line.rstrip("\\"))) % 2 == 1


def _ended(line: str, delimiter: str, strip_tabs: bool) -> bool:
    return (line.lstrip("\t") if strip_tabs else line) == delimiter


def backquoted(text: str) -> list[str]:
    """The command lines inside backquotes in heredoc text, with their escapes resolved."""
    found: list[str] = []
    index = 0
    inside: list[str] | None = None
    while index < len(text):
        char = text[index]
        if char == "\\" and index + 1 < len(text):
            following = text[index + 1]
            if inside is not None:
                inside.append(following if following in "$`\\" else char + following)
            index += 2
            continue
        if char == "`":
            if inside is None:
                inside = []
            else:
                found.append("".join(inside))
                inside = None
        elif inside is not None:
            inside.append(char)
        index += 1
    if inside is not None:
        found.append("".join(inside))  # bash reports the missing backquote; judge what is there
    return found
