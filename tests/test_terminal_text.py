"""The sanitizer for untrusted text (`agent_tui.events.terminal_text`): what it makes visible, that
nothing a terminal obeys survives it, and that everything else comes through unchanged."""

from __future__ import annotations

import json
import unicodedata

import orjson
from hypothesis import given
from hypothesis import strategies as st

from agent_tui.events import visible, visible_json, visible_runs
from agent_tui.events.terminal_text import is_unsafe, marker

BIDI = {*map(chr, range(0x202A, 0x202F)), *map(chr, range(0x2066, 0x206A))}


def obeyed(character: str) -> bool:
    """What a terminal may act on instead of showing: C0 (but tab, newline), DEL, C1, bidi controls,
    and lone surrogates (not text at all). Written from Unicode's own categories, not the module's
    table, so the two are checked against each other."""
    if character in "\t\n":
        return False
    category = unicodedata.category(character)
    return category in ("Cc", "Cs") or character in BIDI


UNSAFE = [chr(code) for code in range(0x110000) if obeyed(chr(code))]
"""Every character a terminal may obey, by Unicode's categories."""

# Text with every kind of character hypothesis finds, surrogates included, and plenty of the
# characters that matter here.
hostile = st.lists(
    st.one_of(
        st.characters(codec=None),
        st.sampled_from(["\x1b", "\x07", "\r", "\r\n", "\x9b", "\x7f", "\u202e", "\u2066", "\x00", "\x85"]),
    )
).map("".join)


@given(hostile)
def test_nothing_a_terminal_obeys_survives(text: str) -> None:
    shown = visible(text)
    assert not [c for c in shown if obeyed(c)], repr(shown)


@given(hostile)
def test_it_is_a_faithful_rendering(text: str) -> None:
    # Every safe character as it was, every unsafe one as its marker, CR LF as the newline.
    expected = "".join(marker(c) if obeyed(c) else c for c in text.replace("\r\n", "\n"))
    assert visible(text) == expected


@given(hostile)
def test_the_runs_are_the_text_and_say_which_pieces_are_markers(text: str) -> None:
    runs = list(visible_runs(text))
    assert "".join(piece for piece, _ in runs) == visible(text)
    assert all(piece for piece, _ in runs)
    markers = [piece for piece, is_marker in runs if is_marker]
    assert markers == [marker(c) for c in text.replace("\r\n", "\n") if obeyed(c)]


@given(st.text(st.characters(codec="utf-8", exclude_categories=("Cc", "Cs"))))
def test_safe_text_comes_back_as_it_is(text: str) -> None:
    text = "".join(c for c in text if c not in BIDI) + "\ttab\nnewline"
    assert visible(text) is text


def test_every_unsafe_character_has_its_own_marker_and_is_said_unsafe() -> None:
    assert [chr(code) for code in range(0x110000) if is_unsafe(chr(code))] == UNSAFE
    markers = [marker(c) for c in UNSAFE]
    assert len(set(markers)) == len(markers)
    assert not [m for m in markers if any(obeyed(c) for c in m)]


def test_each_unsafe_character_is_caught_in_ascii_and_in_wider_text() -> None:
    for character in UNSAFE:
        for before, after in (("a", "b"), ("é — ", " … ›"), ("中", "\U0001f600")):
            assert visible(before + character + after) == before + marker(character) + after


def test_the_markers_a_user_reads() -> None:
    attack = "\x1b]0;owned\x07\x1b[2J\x9b2J\x7f\r\u202eexe.txt\u2066\x00"
    assert visible(attack) == "␛]0;owned␇␛[2J\\x9b2J␡␍\\u202eexe.txt\\u2066␀"
    assert visible("line one\r\nline two\rover") == "line one\nline two␍over"
    assert visible("tabs\tand\nnewlines") == "tabs\tand\nnewlines"
    assert visible("caf\u00e9 \u4e2d\u6587 \U0001f600 \u200d") == "caf\u00e9 \u4e2d\u6587 \U0001f600 \u200d"
    assert visible("\ud800") == "\\ud800"


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(st.characters(codec="utf-8")),
        lambda inner: (
            st.lists(inner, max_size=4)
            | st.dictionaries(st.text(st.characters(codec="utf-8")), inner, max_size=4)
        ),
        max_leaves=12,
    )
)
def test_json_keeps_its_value_and_shows_no_control(value: object) -> None:
    data = orjson.dumps(value)
    guarded = visible_json(data)
    assert orjson.loads(guarded) == value
    assert json.loads(guarded) == value
    text = guarded.decode()
    assert not [c for c in text if obeyed(c)], text


def test_json_escapes_look_like_json() -> None:
    data = orjson.dumps({"a": "\x1b[2J\x9b\x7f\u202e\u2069é"})
    assert visible_json(data) == b'{"a":"\\u001b[2J\\u009b\\u007f\\u202e\\u2069\xc3\xa9"}'
    assert visible_json(b'{"plain":"text"}') == b'{"plain":"text"}'
