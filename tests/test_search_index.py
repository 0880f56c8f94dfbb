"""The search index against a brute-force scan, and kept current while logs change.

The histories are generated (seeded): sessions whose prompts, streamed answers (words split
between deltas), tool calls and outputs are drawn from a small vocabulary, so random queries
(words, prefixes, phrases) hit often. The brute force knows what each event says from the
generator itself and matches it with its own tokenisation (ASCII letters and digits, folded to
lower case: what FTS5's `unicode61` does to ASCII), never with the index's code.
"""

from __future__ import annotations

import itertools
import os
import random
import re
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import orjson
import pytest

from agent_tui.events import visible
from agent_tui.search import QueryError, SearchIndex, excerpt, parse_query

VOCABULARY = [
    "deploy",
    "deployment",
    "staging",
    "stage",
    "src",
    "foo",
    "bar",
    "py",
    "import",
    "imports",
    "README",
    "test",
    "tests",
    "fix",
    "fixes",
    "Fixed",
    "café",
    "parser",
    "parse",
    "ParseError",
    "main",
    "branch",
    "merge",
    "2026",
    "v1",
    "x",
]
SEPARATORS = (" ", " ", " ", ".", "/", "_", "-", "\n", ", ", ": ")


@dataclass(frozen=True)
class Said:
    """What one searchable event says, as the generator wrote it."""

    session_id: str
    sequence: int
    kind: str
    text: str


def _text(rng: random.Random, size: int) -> str:
    parts = []
    for _ in range(size):
        parts.append(rng.choice(VOCABULARY))
        parts.append(rng.choice(SEPARATORS))
    return "".join(parts[:-1])


def _split(rng: random.Random, text: str) -> list[str]:
    """`text` as streamed deltas, cut anywhere (inside words too)."""
    cuts = (
        sorted(rng.sample(range(1, len(text)), min(len(text) - 1, rng.randint(0, 4))))
        if len(text) > 1
        else []
    )
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


def event(
    session: str, sequence: int, kind: str, payload: dict[str, object], turn: str | None = "turn_1"
) -> bytes:
    line = {
        "v": 1,
        "id": f"evt_{session}_{sequence}",
        "sessionId": session,
        "turnId": turn,
        "sequence": sequence,
        "ts": "2026-11-29T22:17:05.877Z",
        "type": kind,
        "payload": payload,
    }
    return orjson.dumps(line) + b"\n"


def history(rng: random.Random, session: str, turns: int) -> tuple[list[bytes], list[Said]]:
    """One session's log lines and what its events say."""
    lines = [
        event(session, 1, "session.created", {"cwd": "/w", "client": "agent-tui", "agentName": session}, None)
    ]
    said: list[Said] = []

    def add(kind: str, payload: dict[str, object], turn: str, says: tuple[str, str] | None = None) -> None:
        sequence = len(lines) + 1
        lines.append(event(session, sequence, kind, payload, turn))
        if says is not None:
            said.append(Said(session, sequence, *says))

    for number in range(turns):
        turn = f"turn_{number}"
        add("turn.started", {"promptPreview": "x"}, turn)
        prompt = _text(rng, rng.randint(1, 8))
        add("user.message", {"content": prompt}, turn, ("prompt", prompt))
        for step in range(rng.randint(1, 3)):
            tokens = {"instruction": 1, "transcript": 1, "tools": 1}
            add("context.built", {"step": step + 1, "tokens": tokens}, turn)  # one per model call
            answer = _text(rng, rng.randint(1, 10))
            for index, delta in enumerate(_split(rng, answer)):
                sequence = len(lines) + 1
                lines.append(event(session, sequence, "model.delta", {"text": delta}, turn))
                if index == 0:
                    said.append(Said(session, sequence, "answer", answer))
            if rng.random() < 0.7:
                command = _text(rng, rng.randint(1, 4))
                call = f"call_{len(lines)}"
                add(
                    "model.tool_call_requested",
                    {"toolCallId": call, "tool": "shell", "args": {"cmd": command}},
                    turn,
                    ("command", f"shell {command}"),
                )
                output = _text(rng, rng.randint(0, 12))
                if output:
                    payload = {"toolCallId": call, "tool": "shell", "result": output, "exitCode": 0}
                    add("tool.completed", payload, turn, ("output", output))
        add("turn.completed", {"stopReason": "final"}, turn)
    return lines, said


# -- the brute force ----------------------------------------------------------------------------


def tokens(text: str) -> list[str]:
    """ASCII words, lower case; `café` (the one non-ASCII word) folds to `cafe`, as FTS5's does."""
    return [word.lower().replace("é", "e") for word in re.findall(r"[A-Za-z0-9é]+", text)]


@dataclass(frozen=True)
class Wanted:
    words: tuple[str, ...]
    prefix: bool

    def typed(self) -> str:
        text = " ".join(self.words)
        if len(self.words) > 1:
            text = f'"{text}"'
        return text + ("*" if self.prefix else "")

    def found_in(self, said: list[str]) -> bool:
        size = len(self.words)
        for start in range(len(said) - size + 1):
            window = said[start : start + size]
            if window[:-1] == list(self.words[:-1]) and (
                window[-1] == self.words[-1] or (self.prefix and window[-1].startswith(self.words[-1]))
            ):
                return True
        return False


def random_query(rng: random.Random) -> list[Wanted]:
    terms = []
    for _ in range(rng.randint(1, 2)):
        size = rng.choice((1, 1, 1, 2, 3))
        words = tuple(tokens(rng.choice(VOCABULARY))[0] for _ in range(size))
        prefix = rng.random() < 0.3
        if prefix:
            last = words[-1]
            words = (*words[:-1], last[: rng.randint(1, len(last))])
        terms.append(Wanted(words, prefix))
    return terms


def brute_force(said: list[Said], terms: list[Wanted]) -> set[tuple[str, int, str]]:
    return {
        (item.session_id, item.sequence, item.kind)
        for item in said
        if all(term.found_in(tokens(item.text)) for term in terms)
    }


def indexed(index: SearchIndex, query: str) -> set[tuple[str, int, str]]:
    results = index.search(query, limit=1_000_000)
    return {(hit.session_id, hit.sequence, hit.kind) for hit in results.hits}


def write_histories(directory: Path, seed: int, sessions: int) -> tuple[list[Path], list[Said]]:
    rng = random.Random(seed)
    files, everything = [], []
    for number in range(sessions):
        session = f"sess_{seed}_{number}"
        lines, said = history(rng, session, rng.randint(1, 4))
        path = directory / f"{session}.jsonl"
        path.write_bytes(b"".join(lines))
        files.append(path)
        everything += said
    return files, everything


@pytest.fixture
def index(tmp_path: Path) -> Iterator[SearchIndex]:
    with SearchIndex.open(tmp_path / "index" / "search.sqlite3") as opened:
        yield opened


class TestAgainstBruteForce:
    @pytest.mark.parametrize("seed", range(6))
    def test_random_queries_find_what_a_scan_finds(
        self, tmp_path: Path, index: SearchIndex, seed: int
    ) -> None:
        files, said = write_histories(tmp_path, seed, sessions=8)
        report = index.sync(files)
        assert report.indexed == len(files) and not report.corrupt
        rng = random.Random(1000 + seed)
        nonempty = 0
        for _ in range(60):
            terms = random_query(rng)
            query = " ".join(term.typed() for term in terms)
            expected = brute_force(said, terms)
            assert indexed(index, query) == expected, query
            nonempty += bool(expected)
        assert nonempty > 20  # the queries really hit

    def test_prefix_and_phrase_queries(self, tmp_path: Path, index: SearchIndex) -> None:
        files, said = write_histories(tmp_path, 99, sessions=10)
        index.sync(files)
        for terms in (
            [Wanted(("deploy",), True)],
            [Wanted(("deploy",), False)],
            [Wanted(("src", "foo"), False)],
            [Wanted(("src", "fo"), True)],
            [Wanted(("parse",), True), Wanted(("readme",), False)],
            [Wanted(("cafe",), False)],
        ):
            query = " ".join(term.typed() for term in terms)
            expected = brute_force(said, terms)
            assert expected, query
            assert indexed(index, query) == expected, query

    def test_it_finds_words_not_substrings(self, tmp_path: Path, index: SearchIndex) -> None:
        log = tmp_path / "sess_a.jsonl"
        log.write_bytes(
            event("sess_a", 1, "session.created", {"cwd": "/w", "client": "t"}, None)
            + event("sess_a", 2, "user.message", {"content": "Rename src/foo_bar.py, please"})
        )
        index.sync([log])
        assert indexed(index, "foo") == {("sess_a", 2, "prompt")}
        assert indexed(index, "src/foo_bar.py") == {("sess_a", 2, "prompt")}
        assert indexed(index, "oo") == set()
        assert indexed(index, "RENAME") == {("sess_a", 2, "prompt")}
        assert indexed(index, "bar.py") == {("sess_a", 2, "prompt")}
        assert indexed(index, "bar.pyx") == set()

    def test_fts_syntax_typed_by_the_user_is_only_words(self, tmp_path: Path, index: SearchIndex) -> None:
        log = tmp_path / "sess_a.jsonl"
        log.write_bytes(
            event("sess_a", 1, "session.created", {"cwd": "/w", "client": "t"}, None)
            + event("sess_a", 2, "user.message", {"content": "text NEAR the OR gate: kind"})
        )
        index.sync([log])
        for query in ("NEAR(text gate)", "text OR missing", "kind:text", "^text", "text -gate", "text AND"):
            assert parse_query(query).fts_expression().count('"') % 2 == 0
            index.search(query)  # never an SQLite error
        assert indexed(index, "text OR missing") == set()  # OR is a word to find, not an operator
        assert indexed(index, "text OR gate") == {("sess_a", 2, "prompt")}


class TestQueries:
    @pytest.mark.parametrize("query", ['"unbalanced', 'fine "and not', '"a" "b'])
    def test_an_unbalanced_quote_is_one_sentence(self, query: str) -> None:
        with pytest.raises(QueryError, match="never closed"):
            parse_query(query)

    @pytest.mark.parametrize("query", ["", "   ", "...", '""', "*", "-- //"])
    def test_nothing_to_search_for(self, query: str) -> None:
        with pytest.raises(QueryError, match="no words"):
            parse_query(query)


class TestKeptCurrent:
    def test_a_growing_log_is_read_from_where_it_was(self, tmp_path: Path, index: SearchIndex) -> None:
        rng = random.Random(7)
        lines, said = history(rng, "sess_grow", 6)
        log = tmp_path / "sess_grow.jsonl"
        log.write_bytes(b"")
        written = 0
        reads = []
        # Grow it in uneven steps, cutting inside answers and inside lines.
        while written < len(lines):
            step = rng.randint(1, 9)
            chunk = b"".join(lines[written : written + step])
            written += step
            torn = rng.random() < 0.3 and written < len(lines)
            with log.open("ab") as handle:
                handle.write(chunk)
                if torn:
                    handle.write(lines[written][:10])
            report = index.sync([log])
            reads.append(report.bytes)
            # At every step the kept index equals one made from scratch of the log as it is.
            with SearchIndex.open(tmp_path / f"step{written}.sqlite3") as fresh:
                fresh.sync([log])
                for query in ("deploy*", "src", '"src foo"', "readme", "x", "fix*"):
                    assert indexed(index, query) == indexed(fresh, query), (written, query)
            if torn:  # the writer's next write completes the line
                with log.open("ab") as handle:
                    handle.write(lines[written][10:])
                written += 1
        index.sync([log])
        rng_q = random.Random(8)
        with SearchIndex.open(tmp_path / "fresh.sqlite3") as fresh:
            fresh.sync([log])
            for _ in range(40):
                terms = random_query(rng_q)
                query = " ".join(term.typed() for term in terms)
                assert indexed(index, query) == indexed(fresh, query) == brute_force(said, terms), query
        assert sum(reads) < 3 * log.stat().st_size  # appended bytes, not the whole log each time

    def test_an_unchanged_log_is_not_read(self, tmp_path: Path, index: SearchIndex) -> None:
        files, _ = write_histories(tmp_path, 3, sessions=4)
        assert index.sync(files).bytes == sum(f.stat().st_size for f in files)
        again = index.sync(files)
        assert (again.bytes, again.indexed, again.rows) == (0, 0, 0)

    def test_a_word_split_between_deltas_across_two_syncs_is_found(
        self, tmp_path: Path, index: SearchIndex
    ) -> None:
        log = tmp_path / "sess_s.jsonl"
        head = event("sess_s", 1, "session.created", {"cwd": "/w", "client": "t"}, None)
        log.write_bytes(head + event("sess_s", 2, "model.delta", {"text": "run the depl"}))
        index.sync([log])
        assert indexed(index, "depl") == {("sess_s", 2, "answer")}
        with log.open("ab") as handle:
            handle.write(event("sess_s", 3, "model.delta", {"text": "oyment now"}))
        index.sync([log])
        assert indexed(index, "deployment") == {("sess_s", 2, "answer")}
        assert indexed(index, "depl") == set()
        assert len(index.search("run", limit=100).hits) == 1

    @pytest.mark.parametrize("how", ["truncated", "replaced", "rewritten", "shrunk-then-grown"])
    def test_a_log_truncated_or_replaced_is_indexed_again(
        self, tmp_path: Path, index: SearchIndex, how: str
    ) -> None:
        rng = random.Random(11)
        old_lines, old_said = history(rng, "sess_r", 5)
        new_lines, new_said = history(rng, "sess_r", 3)
        log = tmp_path / "sess_r.jsonl"
        log.write_bytes(b"".join(old_lines))
        index.sync([log])
        if how == "truncated":
            keep = len(old_lines) // 2
            with log.open("r+b") as handle:
                handle.truncate(len(b"".join(old_lines[:keep])))
            expected_said = [s for s in old_said if s.sequence <= keep]
        elif how == "replaced":  # another file renamed over it (another inode)
            other = tmp_path / "new.tmp"
            other.write_bytes(b"".join(new_lines))
            other.replace(log)
            expected_said = new_said
        elif how == "rewritten":  # same inode, same size or larger, another first line
            different = [
                new_lines[0].replace(b'"agentName":"sess_r"', b'"agentName":"sess_R"'),
                *new_lines[1:],
            ]
            data = b"".join(different)
            with log.open("r+b") as handle:
                handle.truncate(0)
                handle.write(data + b"\n" * max(0, len(b"".join(old_lines)) - len(data)))
            expected_said = new_said
        else:  # emptied, then more written than before: only the first line's hash tells
            log.write_bytes(b"")
            alike = [old_lines[0], *new_lines[1:]] * 1
            log.write_bytes(b"".join(alike) + b"".join(old_lines[1:]))
            expected_said = None
        report = index.sync([log])
        if how == "shrunk-then-grown":
            with SearchIndex.open(tmp_path / "fresh.sqlite3") as fresh:
                fresh.sync([log])
                for word in ("deploy*", "src", '"src foo"', "readme", "x"):
                    assert indexed(index, word) == indexed(fresh, word), word
            return
        assert report.reindexed == [log]
        assert expected_said is not None
        rng_q = random.Random(5)
        for _ in range(40):
            terms = random_query(rng_q)
            query = " ".join(term.typed() for term in terms)
            assert indexed(index, query) == brute_force(expected_said, terms), query

    def test_a_log_that_is_gone_leaves_the_index(self, tmp_path: Path, index: SearchIndex) -> None:
        files, _said = write_histories(tmp_path, 4, sessions=3)
        index.sync(files)
        files[0].unlink()
        report = index.sync(files[1:])
        assert report.removed == 1
        assert all(hit.path != files[0] for hit in index.search("x*", limit=10**6).hits)

    def test_corrupt_lines_are_skipped_and_counted(self, tmp_path: Path, index: SearchIndex) -> None:
        log = tmp_path / "sess_c.jsonl"
        log.write_bytes(
            event("sess_c", 1, "session.created", {"cwd": "/w", "client": "t", "agentName": "lead"}, None)
            + b"{not json\n"
            + event("sess_c", 3, "user.message", {"content": "deploy staging"})
            + b"[1, 2]\n"
            + b'{"type": "user.message", "payload": "no"}\n'
            + b"\xff\xfe\n"
            + b"\n"
            + event("sess_c", 8, "user.message", {"content": "after the damage"})
        )
        report = index.sync([log])
        (status,) = report.corrupt
        assert (status.corrupt, status.first_corrupt) == (5, 2)
        assert indexed(index, "staging") == {("sess_c", 3, "prompt")}
        assert indexed(index, "damage") == {("sess_c", 8, "prompt")}
        # Appending again does not count the same corrupt lines twice.
        with log.open("ab") as handle:
            handle.write(event("sess_c", 9, "model.delta", {"text": "more"}))
        (again,) = index.sync([log]).corrupt
        assert again.corrupt == 5
        with log.open("ab") as handle:
            handle.write(event("sess_c", 10, "model.delta", {"text": " text"}) + b"oops\n")
        (third,) = index.sync([log]).corrupt
        assert third.corrupt == 6

    def test_an_unreadable_log_is_reported_not_raised(self, tmp_path: Path, index: SearchIndex) -> None:
        files, _ = write_histories(tmp_path, 5, sessions=2)
        missing = tmp_path / "sess_missing.jsonl"
        report = index.sync([*files, missing])
        assert [path for path, _ in report.unreadable] == [missing]
        assert report.indexed == 2


class TestHostileLogs:
    def test_values_sqlite_cannot_hold_are_corrupt_lines_not_a_crash(
        self, tmp_path: Path, index: SearchIndex
    ) -> None:
        log = tmp_path / "sess_h.jsonl"
        bad = [
            {"type": "user.message", "sequence": 2, "turnId": {"a": 1}, "payload": {"content": "dict turn"}},
            {"type": "user.message", "sequence": 2**64 - 1, "payload": {"content": "huge sequence"}},
            {"type": "user.message", "sequence": -1, "payload": {"content": "negative"}},
            {"type": "user.message", "sequence": 3.5, "payload": {"content": "float"}},
            {"type": "user.message", "sequence": 3, "payload": {"content": ["not", "text"]}},
            {"type": ["x"], "sequence": 3, "payload": {}},
        ]
        log.write_bytes(
            event("sess_h", 1, "session.created", {"cwd": "/w", "client": "t"}, None)
            + b"".join(orjson.dumps(line) + b"\n" for line in bad)
            + b'{"type": "user.message", "sequence": 1180591620717411303424, "payload": {"content": "big"}}\n'
            + b"[" * 5000
            + b"\n"  # nested deeper than the parser goes
            + event("sess_h", 9, "user.message", {"content": "still here"})
        )
        report = index.sync([log])
        assert report.corrupt[0].corrupt == 7  # all but the content that is no text (ignored)
        assert indexed(index, "still") == {("sess_h", 9, "prompt")}
        for word in ("dict", "huge", "negative", "float", "big", "text"):
            assert indexed(index, word) == set(), word

    def test_a_corrupt_line_inside_an_answer_does_not_lose_the_answer(
        self, tmp_path: Path, index: SearchIndex
    ) -> None:
        log = tmp_path / "sess_a.jsonl"
        log.write_bytes(
            event("sess_a", 1, "session.created", {"cwd": "/w", "client": "t"}, None)
            + event("sess_a", 2, "model.delta", {"text": "deploy sta"})
            + b'{"type": ["model.delta"], "sequence": 3, "payload": {}}\n'  # a type no event has
            + event("sess_a", 4, "model.delta", {"text": "ging now"})
            + event("sess_a", 5, "user.message", {"content": "next"})
        )
        report = index.sync([log])
        assert (report.corrupt[0].corrupt, report.corrupt[0].first_corrupt) == (1, 3)
        assert indexed(index, '"deploy staging now"') == {("sess_a", 2, "answer")}

    def test_a_fifo_or_a_device_named_like_a_log_is_not_read(
        self, tmp_path: Path, index: SearchIndex
    ) -> None:
        files, _ = write_histories(tmp_path, 12, sessions=1)
        fifo = tmp_path / "sess_fifo.jsonl"
        os.mkfifo(fifo)
        device = tmp_path / "sess_zero.jsonl"
        device.symlink_to("/dev/zero")
        report = index.sync([*files, fifo, device])  # would block or never end if opened
        assert sorted(report.unreadable) == sorted(
            [(fifo, "not a regular file"), (device, "not a regular file")]
        )
        assert report.indexed == 1


class TestTheIndexFile:
    def test_a_corrupt_index_file_is_built_again(self, tmp_path: Path) -> None:
        files, said = write_histories(tmp_path, 6, sessions=2)
        path = tmp_path / "search.sqlite3"
        path.write_bytes(b"this is not a database" * 100)
        with SearchIndex.open(path) as index:
            index.sync(files)
            assert indexed(index, "x") == brute_force(said, [Wanted(("x",), False)])

    def test_an_index_of_another_version_is_built_again(self, tmp_path: Path) -> None:
        files, said = write_histories(tmp_path, 6, sessions=2)
        path = tmp_path / "search.sqlite3"
        with SearchIndex.open(path) as index:
            index.sync(files)
        connection = sqlite3.connect(path)
        connection.execute("PRAGMA user_version = 999")
        connection.commit()
        connection.close()
        with SearchIndex.open(path) as index:
            assert index.files() == []
            assert index.sync(files).indexed == 2
            assert indexed(index, "x") == brute_force(said, [Wanted(("x",), False)])

    def test_two_indexes_on_one_file_never_index_a_line_twice(self, tmp_path: Path) -> None:
        files, said = write_histories(tmp_path, 8, sessions=6)
        path = tmp_path / "search.sqlite3"
        with SearchIndex.open(path) as first, SearchIndex.open(path) as second:
            first.sync(files[:3])
            second.sync(files)
            first.sync(files)
            assert indexed(first, "x") == indexed(second, "x") == brute_force(said, [Wanted(("x",), False)])


class TestExcerpts:
    def test_the_matching_line_is_shown_with_its_words_marked(self) -> None:
        query = parse_query("deploy* foo.py")
        shown = excerpt("first line\nnow deploying src/foo.py there\nlast", query)
        assert shown.line == 1
        marked = [text for text, mark in shown.visible_parts() if mark]
        assert marked == ["deploying", "foo.py"]

    def test_a_phrase_over_a_line_break_marks_its_words(self) -> None:
        shown = excerpt("nothing here\nrun the foo\nbar next", parse_query('"foo bar"'))
        assert shown.line == 1
        assert [text for text, mark in shown.visible_parts() if mark] == ["foo"]

    def test_a_long_line_is_clipped_around_the_match(self) -> None:
        query = parse_query("needle")
        shown = excerpt("a " * 500 + "needle" + " b" * 500, query, width=60)
        assert shown.clipped_left and shown.clipped_right and len(shown.text) == 60
        assert [text for text, mark in shown.visible_parts() if mark] == ["needle"]

    def test_control_characters_are_made_visible(self) -> None:
        hostile = "ok \x1b]0;owned\x07 \x1b[2J\r\x08\x9b31m\x7f tab\tand\nnewline"
        shown = visible(hostile)
        assert not any((ord(ch) < 0x20 and ch not in "\t\n") or 0x7F <= ord(ch) < 0xA0 for ch in shown)
        assert "␛]0;owned␇" in shown and "␍" in shown and "\\x9b" in shown and "␡" in shown
        assert "\t" in shown and "\n" in shown
        spoof = "rm -rf \u202e/ fdsa\u202c ok \u2066x\u2069"
        assert visible(spoof) == "rm -rf \\u202e/ fdsa\\u202c ok \\u2066x\\u2069"
        assert visible("naïve café 日本語 🙂‍↕️") == "naïve café 日本語 🙂‍↕️"  # text stays text
        query = parse_query("owned")
        parts = excerpt(hostile, query).visible_parts()
        assert all("\x1b" not in text for text, _ in parts)
        assert [text for text, mark in parts if mark] == ["owned"]


def test_two_threads_syncing_at_once_index_each_line_once(tmp_path: Path) -> None:
    import threading

    files, said = write_histories(tmp_path, 21, sessions=12)
    path = tmp_path / "search.sqlite3"
    SearchIndex.open(path).close()
    start = threading.Barrier(2)
    errors: list[BaseException] = []

    def run() -> None:
        try:
            with SearchIndex.open(path) as index:
                start.wait()
                index.sync(files)
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    with SearchIndex.open(path) as index:
        hits = index.search("x", limit=10**6).hits
        keys = [(hit.session_id, hit.sequence, hit.kind) for hit in hits]
        assert len(keys) == len(set(keys))
        assert set(keys) == brute_force(said, [Wanted(("x",), False)])


def test_an_index_that_cannot_be_written_is_a_search_error(tmp_path: Path) -> None:
    from agent_tui.search import SearchError

    blocker = tmp_path / "a-file"
    blocker.write_text("in the way")
    with pytest.raises(SearchError, match="a-file"):
        SearchIndex.open(blocker / "search.sqlite3")


def test_progress_counts_up_to_every_byte_and_log(tmp_path: Path) -> None:
    from agent_tui.search import Progress

    files, _ = write_histories(tmp_path, 30, sessions=9)
    seen: list[Progress] = []
    with SearchIndex.open(tmp_path / "search.sqlite3") as index:
        index.sync(files, progress=seen.append)
        assert [p.done_files for p in seen] == list(range(1, 10))
        assert all(p.total_files == 9 for p in seen)
        done = [p.done_bytes for p in seen]
        assert done == sorted(done) and done[-1] == seen[-1].total_bytes == sum(
            f.stat().st_size for f in files
        )
        stopped: list[Progress] = []
        with files[0].open("ab") as handle:
            handle.write(event("sess_x", 99, "user.message", {"content": "more"}))
        index.sync(files, progress=stopped.append, stop=lambda: bool(stopped))
        assert len(stopped) == 1  # the stop was heard before the second log


def test_sync_unchanged_says_what_a_sync_with_nothing_to_do_reports(
    tmp_path: Path, index: SearchIndex
) -> None:
    files, _ = write_histories(tmp_path, 11, 4)
    torn = tmp_path / "sess_torn.jsonl"
    torn.write_bytes(event("sess_torn", 1, "user.message", {"content": "x"}, None) + b"{not json\n")
    files.append(torn)
    assert index.sync_unchanged(files) is None  # nothing indexed yet
    index.sync(files)
    report = index.sync_unchanged(files)
    assert report is not None
    assert report == index.sync(files)  # the sync after it had nothing to do either
    assert [status.path for status in report.corrupt] == [torn]
    assert index.sync_unchanged(files[1:]) is None  # a log the index holds is not listed: it goes
    assert index.sync_unchanged([*files, tmp_path / "sess_new.jsonl"]) is None  # one it does not hold
    assert index.sync_unchanged([]) is None
    status = files[0].stat()
    os.utime(files[0], ns=(status.st_atime_ns, status.st_mtime_ns + 1))
    assert index.sync_unchanged(files) is None  # written to since
    index.sync(files)
    assert index.sync_unchanged(files) is not None
    files[1].unlink()
    assert index.sync_unchanged(files) is None  # gone
