"""The JSONL event log on real files: append/replay, the sequence chain, torn tails and repair,
corrupt lines named by file:line, random access through the sparse index, tailing, concurrent
sessions, and failed writes that leave the log whole (docs/event-log.md)."""

from __future__ import annotations

import copy
import errno
import os
import random
from itertools import islice
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support_events import SAMPLE_PAYLOADS, build_event

from agent_tui.events import (
    EVENT_TYPES,
    PAYLOADS,
    Event,
    EventValidationError,
    event_from_dict,
    payload_from,
)
from agent_tui.events.validation import BUILDERS_WITH_V, BUILDERS_WITHOUT_V, _Rejected
from agent_tui.store import (
    EventLogDecodeError,
    EventLogSequenceError,
    EventLogTornTailError,
    JsonlEventLog,
    JsonlFileEventStore,
    LineIndex,
    TailRepair,
    iter_lines,
)
from agent_tui.store import index as index_module
from agent_tui.store import jsonl as jsonl_module


def write_log(path: Path, events: list[Event]) -> JsonlEventLog:
    log = JsonlEventLog(path)
    for event in events:
        log.append(event)
    log.close()
    return log


def lines_of(events: list[Event]) -> bytes:
    return b"".join(event.to_json() + b"\n" for event in events)


def decode_error(path: Path, mode: str = "skip-trailing-partial", **kwargs: Any) -> EventLogDecodeError:
    with pytest.raises(EventLogDecodeError) as caught:
        list(JsonlEventLog(path).replay(mode, **kwargs))  # type: ignore[arg-type]
    return caught.value


class TestAppendAndReplay:
    def test_replay_gives_back_what_was_appended_byte_for_byte(self, tmp_path: Path, make_session) -> None:
        events = make_session(40)
        path = tmp_path / "sess_test.jsonl"
        log = write_log(path, events)
        assert list(JsonlEventLog(path).replay()) == events
        assert list(log.replay("strict")) == events
        assert path.read_bytes() == lines_of(events)
        assert JsonlEventLog(path).last_sequence == 40

    def test_a_missing_file_is_an_empty_log(self, tmp_path: Path) -> None:
        log = JsonlEventLog(tmp_path / "nowhere" / "sess_x.jsonl")
        assert list(log.replay("strict")) == []
        assert log.last_sequence == 0
        assert len(log) == 0
        assert log.torn_line() is None
        assert log.repair() is None
        with pytest.raises(IndexError):
            log.read(0)

    def test_the_first_append_creates_the_directory(self, tmp_path: Path, make_event) -> None:
        path = tmp_path / "sessions" / "sess_test.jsonl"
        with JsonlEventLog(path) as log:
            log.append(make_event(1, "session.created"))
        assert [e.sequence for e in JsonlEventLog(path).replay()] == [1]

    @pytest.mark.parametrize("sequence", [5, 4, 1, 0, 7])
    def test_an_append_out_of_sequence_is_refused_and_writes_nothing(
        self, tmp_path: Path, make_session, make_event, sequence: int
    ) -> None:
        path = tmp_path / "sess_test.jsonl"
        log = write_log(path, make_session(5))
        before = path.read_bytes()
        with pytest.raises(EventLogSequenceError) as caught:
            log.append(make_event(sequence))
        assert (caught.value.expected, caught.value.got) == (6, sequence)
        assert path.read_bytes() == before
        assert log.last_sequence == 5
        log.append(make_event(6))
        assert log.last_sequence == 6

    def test_an_empty_log_takes_only_sequence_one(self, tmp_path: Path, make_event) -> None:
        path = tmp_path / "sess_test.jsonl"
        with pytest.raises(EventLogSequenceError):
            JsonlEventLog(path).append(make_event(2))
        assert not path.exists()

    def test_a_reopened_log_continues_from_its_last_line(self, tmp_path: Path, make_session) -> None:
        path = tmp_path / "sess_test.jsonl"
        events = make_session(30)
        write_log(path, events[:17])
        log = JsonlEventLog(path)
        assert log.last_sequence == 17
        for event in events[17:]:
            log.append(event)
        assert list(JsonlEventLog(path).replay("strict")) == events

    def test_iter_lines_reports_offsets_and_the_torn_tail(self, tmp_path: Path) -> None:
        path = tmp_path / "raw.jsonl"
        path.write_bytes(b"ab\n\ncde\nfg")
        assert list(iter_lines(path)) == [
            (0, b"ab", True),
            (3, b"", True),
            (4, b"cde", True),
            (8, b"fg", False),
        ]


class TestTornTail:
    def torn_log(self, tmp_path: Path, make_session, count: int = 10) -> tuple[Path, list[Event], bytes]:
        path = tmp_path / "sess_test.jsonl"
        events = make_session(count + 1)
        write_log(path, events[:count])
        torn = events[count].to_json()[:37]  # a crash in the middle of a write
        with open(path, "ab") as handle:
            handle.write(torn)
        return path, events, torn

    def test_default_replay_skips_a_torn_final_line(self, tmp_path: Path, make_session) -> None:
        path, events, _torn = self.torn_log(tmp_path, make_session)
        assert list(JsonlEventLog(path).replay()) == events[:10]

    def test_strict_replay_names_the_file_and_line_of_a_torn_tail(self, tmp_path: Path, make_session) -> None:
        path, _events, _torn = self.torn_log(tmp_path, make_session)
        error = decode_error(path, "strict")
        assert (error.path, error.line_number) == (path, 11)
        assert str(error).startswith(f"{path}:11: ")
        assert decode_error(path, "strict", start_line=10).line_number == 11
        assert decode_error(path, "strict", start_line=4).line_number == 11

    def test_append_is_refused_until_repair_then_continues_the_sequence(
        self, tmp_path: Path, make_session
    ) -> None:
        path, events, torn = self.torn_log(tmp_path, make_session)
        log = JsonlEventLog(path)
        assert log.last_sequence == 10
        tail = log.torn_line()
        assert tail is not None and tail.size == len(torn)
        with pytest.raises(EventLogTornTailError) as caught:
            log.append(events[10])
        assert (caught.value.line_number, caught.value.size) == (11, len(torn))
        with pytest.raises(EventLogTornTailError):
            log.append(events[10])  # still refused: nothing was repaired
        assert path.read_bytes() == lines_of(events[:10]) + torn

        repair = log.repair()
        assert repair == TailRepair(path, 11, len(torn))
        assert f"{path}:11" in repair.describe() and f"{len(torn)} bytes" in repair.describe()
        assert path.read_bytes() == lines_of(events[:10])
        assert log.repair() is None
        log.append(events[10])
        assert list(JsonlEventLog(path).replay("strict")) == events

    def test_a_log_that_is_only_a_torn_line_repairs_to_empty(self, tmp_path: Path, make_event) -> None:
        path = tmp_path / "sess_test.jsonl"
        path.write_bytes(b'{"v":1,"id":"ev')
        log = JsonlEventLog(path)
        assert list(log.replay()) == []
        assert log.last_sequence == 0
        assert log.repair() == TailRepair(path, 1, 15)
        log.append(make_event(1, "session.created"))
        assert [e.sequence for e in log.replay("strict")] == [1]


class TestCorruptLines:
    @pytest.mark.parametrize("bad_line", [b"{not json", b"", b'{"v":1}', b"\xff\xfe garbage", b"[]"])
    def test_a_corrupt_complete_line_is_named_by_file_and_line(
        self, tmp_path: Path, make_session, bad_line: bytes
    ) -> None:
        events = make_session(20)
        path = tmp_path / "sess_test.jsonl"
        path.write_bytes(lines_of(events[:12]) + bad_line + b"\n" + lines_of(events[12:]))
        error = decode_error(path)
        assert (error.path, error.line_number) == (path, 13)
        assert str(error).startswith(f"{path}:13: ")
        seen: list[Event] = []
        with pytest.raises(EventLogDecodeError):
            for event in JsonlEventLog(path).replay():
                seen.append(event)
        assert seen == events[:12]
        with pytest.raises(EventLogDecodeError) as caught:
            JsonlEventLog(path).read(12)
        assert caught.value.line_number == 13

    def test_an_invalid_event_names_the_field_too(self, tmp_path: Path, make_session) -> None:
        events = make_session(8)
        line = events[5].to_json().replace(b'"sequence":6', b'"sequence":"6"')
        path = tmp_path / "sess_test.jsonl"
        path.write_bytes(lines_of(events[:5]) + line + b"\n" + lines_of(events[6:]))
        error = decode_error(path)
        assert error.line_number == 6 and error.reason.startswith("sequence:")

    @pytest.mark.parametrize(
        ("order", "line_number", "words"),
        [
            ([1, 2, 3, 5, 6], 4, "sequence 5 follows 3"),  # gap
            ([1, 2, 3, 3, 4], 4, "sequence 3 follows 3"),  # repeat
            ([1, 2, 4, 3], 3, "sequence 4 follows 2"),  # out of order
            ([2, 3, 4], 1, "a log starts at 1"),  # does not start at 1
        ],
    )
    def test_a_broken_sequence_chain_is_named_by_line(
        self, tmp_path: Path, make_session, order: list[int], line_number: int, words: str
    ) -> None:
        events = make_session(6)
        path = tmp_path / "sess_test.jsonl"
        path.write_bytes(lines_of([events[n - 1] for n in order]))
        error = decode_error(path)
        assert (error.path, error.line_number) == (path, line_number)
        assert words in error.reason


@pytest.fixture(scope="module")
def big_log(tmp_path_factory: pytest.TempPathFactory, make_session) -> tuple[Path, list[Event]]:
    """Some 8 MiB over ~130 index blocks, with lines longer than a block (one over three blocks)."""
    path = tmp_path_factory.mktemp("big") / "sess_test.jsonl"
    events = make_session(30_000)
    long_ones = {777: 70_000, 12_345: 200_000, 29_999: 65_536}
    for n, size in long_ones.items():
        event = events[n]
        payload = payload_from("tool.completed", dict(toolCallId="c", tool="shell", result="x" * size))
        events[n] = Event(
            id=event.id,
            session_id=event.session_id,
            turn_id=event.turn_id,
            sequence=event.sequence,
            ts=event.ts,
            type="tool.completed",
            payload=payload,
        )
    path.write_bytes(lines_of(events))
    return path, events


class TestRandomAccess:
    def test_read_n_equals_the_nth_replayed_event(self, big_log) -> None:
        path, events = big_log
        assert path.stat().st_size > 100 * index_module.BLOCK
        log = JsonlEventLog(path)
        assert len(log) == len(events)
        replayed = list(log.replay("strict"))
        assert replayed == events
        data = path.read_bytes()
        starts = [0]
        for line in data.splitlines(keepends=True):
            starts.append(starts[-1] + len(line))
        picks = set(random.Random(3).sample(range(len(events)), 600))
        picks |= {0, 1, len(events) - 1, 776, 777, 778, 12_344, 12_345, 12_346, 29_998}
        picks |= {
            n
            for n in range(len(events))
            if starts[n] // index_module.BLOCK != starts[n + 1] // index_module.BLOCK
        }
        for n in sorted(picks):
            assert log.read(n) == replayed[n], n
            assert log.index.line_span(n) == (starts[n], starts[n + 1]), n
        assert log.last_sequence == len(events)

    def test_replay_from_a_line_is_the_tail_of_a_full_replay(self, big_log) -> None:
        path, events = big_log
        log = JsonlEventLog(path)
        for start in [0, 1, 776, 777, 778, 12_345, 20_000, 29_999, 30_000, 30_001]:
            assert list(log.replay("strict", start_line=start)) == events[start:], start

    def test_a_chain_break_after_start_line_is_still_caught(self, tmp_path: Path, make_session) -> None:
        events = make_session(30)
        path = tmp_path / "sess_test.jsonl"
        path.write_bytes(lines_of(events[:20] + events[21:]))
        assert list(islice(JsonlEventLog(path).replay(start_line=5), 3)) == events[5:8]
        assert decode_error(path, start_line=5).line_number == 21
        assert list(JsonlEventLog(path).replay(start_line=20)) == events[21:]  # no line before it


class TestLineIndex:
    def test_extend_picks_up_appended_lines_and_torn_tails(self, tmp_path: Path) -> None:
        path = tmp_path / "grow.jsonl"
        index = LineIndex(path)
        assert (index.line_count, index.size, index.has_torn_tail) == (0, 0, False)
        path.write_bytes(b"one\ntwo\n")
        assert index.extend() == 2
        with open(path, "ab") as handle:
            handle.write(b"thr")
        assert index.extend() == 0
        assert index.has_torn_tail and index.complete_bytes() == 8
        with open(path, "ab") as handle:
            handle.write(b"ee\n" + b"z" * 100_000 + b"\nfive\n")
        assert index.extend() == 3
        assert [index.read_line(n) for n in (0, 2, 4)] == [b"one", b"three", b"five"]
        assert index.read_line(3) == b"z" * 100_000
        assert not index.has_torn_tail and index.complete_bytes() == index.size

    def test_extend_starts_over_after_truncation_or_replacement(self, tmp_path: Path) -> None:
        path = tmp_path / "shrink.jsonl"
        path.write_bytes(b"".join(b"line %d\n" % n for n in range(20_000)))
        index = LineIndex(path)
        assert index.line_count == 20_000
        with open(path, "r+b") as handle:
            handle.truncate(70_000)
        index.extend()
        assert index.line_count == path.read_bytes().count(b"\n")
        assert index.read_line(index.line_count - 1) == path.read_bytes().splitlines()[index.line_count - 1]
        other = tmp_path / "other.jsonl"
        other.write_bytes(b"a\n" * 50_000)  # bigger than what is indexed
        os.replace(other, path)
        index.extend()
        assert index.line_count == 50_000 and index.read_line(49_999) == b"a"
        path.unlink()
        index.extend()
        assert index.line_count == 0

    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(
        chunks=st.lists(st.lists(st.integers(0, 40), max_size=12), min_size=1, max_size=5),
        torn=st.integers(0, 9),
        block=st.sampled_from([1, 2, 7, 16, 64]),
    )
    def test_matches_a_naive_split_for_any_block_size(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunks: list[list[int]], torn: int, block: int
    ) -> None:
        # The same code with tiny blocks (and reads of three blocks), so small files cross many
        # block and read boundaries.
        monkeypatch.setattr(index_module, "BLOCK", block)
        monkeypatch.setattr(index_module, "_READ", 3 * block)
        path = tmp_path / f"naive_{block}.jsonl"
        path.write_bytes(b"")
        index = LineIndex(path)
        rng = random.Random(len(chunks))
        for lengths in chunks:  # tail the file as it grows
            with open(path, "ab") as handle:
                handle.write(b"".join(bytes(rng.choice(b"abc{}") for _ in range(n)) + b"\n" for n in lengths))
            index.extend()
        with open(path, "ab") as handle:
            handle.write(b"t" * torn)
        index.extend()
        data = path.read_bytes()
        lines = data.split(b"\n")[:-1]
        assert index.line_count == len(lines)
        assert index.has_torn_tail == (torn > 0)
        assert index.complete_bytes() == len(data) - torn
        offset = 0
        for n, line in enumerate(lines):
            assert index.line_span(n) == (offset, offset + len(line) + 1)
            assert index.read_line(n) == line
            offset += len(line) + 1
        with pytest.raises(IndexError):
            index.read_line(len(lines))


class TestConcurrentSessions:
    @pytest.mark.anyio
    async def test_fifty_sessions_appending_at_once_stay_gap_free(self, tmp_path: Path, make_session) -> None:
        store = JsonlFileEventStore(tmp_path / "sessions")
        sessions = {f"sess_{n:02d}": make_session(30 + n % 7, session_id=f"sess_{n:02d}") for n in range(50)}
        order: list[str] = []

        async def run(session_id: str) -> None:
            for event in sessions[session_id]:
                await store.append(event)
                order.append(session_id)
                await anyio.sleep(0)

        async with anyio.create_task_group() as group:
            for session_id in sessions:
                group.start_soon(run, session_id)
        store.close()

        assert order[:50] != sorted(order[:50]) or len(set(order[:50])) > 1  # they interleaved
        assert len(set(order[:100])) == 50
        reopened = JsonlFileEventStore(tmp_path / "sessions")
        assert sorted(path.stem for path in reopened.root.glob("*.jsonl")) == sorted(sessions)
        for session_id, events in sessions.items():
            assert list(reopened.replay(session_id, "strict")) == events
            assert reopened.last_sequence(session_id) == len(events)

    @pytest.mark.anyio
    async def test_the_store_refuses_bad_session_ids_and_sequences(self, tmp_path: Path, make_event) -> None:
        store = JsonlFileEventStore(tmp_path)
        for bad in ("", "../x", ".hidden", "a/b"):
            with pytest.raises(ValueError):
                store.path_for(bad)
        with pytest.raises(EventLogSequenceError):
            await store.append(make_event(3))
        await store.append(make_event(1, "session.created"))
        assert store.last_sequence("sess_test") == 1


class TestFailedWrites:
    """A full disk is simulated by a write that stores half the bytes (or none) and says so."""

    def fail_writes(self, monkeypatch: pytest.MonkeyPatch, log: JsonlEventLog, how: str) -> list[int]:
        real_write = os.write
        calls: list[int] = []

        def write(fd: int, data: bytes) -> int:
            if fd != log._fd:  # only the log under test
                return real_write(fd, data)
            calls.append(len(data))
            if how == "enospc":
                raise OSError(errno.ENOSPC, "No space left on device")
            return real_write(fd, bytes(data)[: len(data) // 2])

        monkeypatch.setattr(jsonl_module.os, "write", write)
        return calls

    @pytest.mark.parametrize("how", ["short", "enospc"])
    def test_a_failed_write_leaves_the_log_whole_and_a_retry_reuses_the_sequence(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make_session, how: str
    ) -> None:
        events = make_session(12)
        path = tmp_path / "sess_test.jsonl"
        log = JsonlEventLog(path)
        for event in events[:10]:
            log.append(event)
        before = path.read_bytes()
        calls = self.fail_writes(monkeypatch, log, how)
        with pytest.raises(OSError) as caught:
            log.append(events[10])
        assert caught.value.errno == errno.ENOSPC
        assert calls, "the fake write was not reached"
        assert path.read_bytes() == before  # no torn line left behind
        assert log.last_sequence == 10
        assert log.torn_line() is None
        monkeypatch.undo()
        log.append(events[10])
        log.append(events[11])
        assert list(JsonlEventLog(path).replay("strict")) == events

    def test_a_failed_fsync_cuts_the_line_back_off(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make_session
    ) -> None:
        events = make_session(4)
        path = tmp_path / "sess_test.jsonl"
        log = JsonlEventLog(path, fsync=True)
        for event in events[:3]:
            log.append(event)
        before = path.read_bytes()
        real_fsync = os.fsync

        def fsync(fd: int) -> None:
            if fd == log._fd:
                raise OSError(errno.EIO, "I/O error")
            real_fsync(fd)

        monkeypatch.setattr(jsonl_module.os, "fsync", fsync)
        with pytest.raises(OSError):
            log.append(events[3])
        assert path.read_bytes() == before
        assert log.last_sequence == 3
        monkeypatch.undo()
        log.append(events[3])
        assert list(JsonlEventLog(path).replay("strict")) == events

    @pytest.mark.anyio
    async def test_the_store_raises_and_the_session_log_stays_usable(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make_session
    ) -> None:
        store = JsonlFileEventStore(tmp_path)
        events = make_session(3)
        await store.append(events[0])
        self.fail_writes(monkeypatch, store.log("sess_test"), "short")
        with pytest.raises(OSError):
            await store.append(events[1])
        monkeypatch.undo()
        assert store.last_sequence("sess_test") == 1
        await store.append(events[1])
        await store.append(events[2])
        assert list(store.replay("sess_test", "strict")) == events


# -- replay's fast path against the general check ----------------------------------------------
# Replay checks a decoded line with a generated builder per event type (agent_tui.events.model)
# and asks `event_from_dict` only about what the builder refuses. The builder may refuse a valid
# line (it then takes the slow path), but must never accept one `event_from_dict` rejects, nor
# build a different event.

NEAR_MISS = [
    0,
    1,
    -1,
    3,
    2**63,
    True,
    False,
    None,
    "",
    "x",
    1.0,
    3.0,
    0.5,
    [],
    {},
    ["stdout"],
    {"k": 1},
    "stdout",
    "stderr",
    "ask",
    "allow",
    "user",
    "read",
    "final",
    "completed",
    "permission_denied",
    "provider_failure",
    {"promptTokens": 1, "completionTokens": 2},
    {"instruction": 1, "transcript": 2, "tools": 3},
    {"promptTokens": 1},
    [{"text": "x"}],
]
ENVELOPE = ("v", "id", "sessionId", "turnId", "sequence", "ts", "type", "payload")


@st.composite
def decoded_lines(draw: st.DrawFn) -> Any:
    """A line as `orjson.loads` gives it: a valid event of some type, changed a little or not."""
    type_name = draw(st.sampled_from(EVENT_TYPES))
    payload = copy.deepcopy(SAMPLE_PAYLOADS[type_name])
    for name in sorted(payload):
        if draw(st.integers(0, 3)) == 0:  # optional fields dropped, required ones too (invalid)
            del payload[name]
    data: dict[str, Any] = {
        "v": 1,
        "id": "evt_3",
        "sessionId": "sess_test",
        "turnId": draw(st.sampled_from(["turn_1", None])),
        "sequence": 3,
        "ts": "2026-11-29T22:17:03.120Z",
        "type": type_name,
        "payload": payload,
    }
    for _ in range(draw(st.integers(0, 2))):
        target = draw(st.sampled_from(["payload", "payload", "envelope", "nested"]))
        value = copy.deepcopy(draw(st.sampled_from(NEAR_MISS) | st.sampled_from(EVENT_TYPES)))
        action = draw(st.sampled_from(["set", "set", "drop", "add"]))
        where = data if target == "envelope" else payload
        if target == "nested":
            nested = [v for v in payload.values() if isinstance(v, dict)]
            if not nested:
                continue
            where = nested[0]
        names = sorted(where) or ["x"]
        name = draw(st.sampled_from(names))
        if action == "set":
            where[name] = value
        elif action == "drop":
            where.pop(name, None)
        else:
            where[draw(st.sampled_from(["extra", "v", "status"]))] = value
    if draw(st.integers(0, 5)) == 0:
        data = copy.deepcopy(draw(st.sampled_from(NEAR_MISS)))  # not even an object
    return orjson.loads(orjson.dumps(data))


def general_verdict(data: Any) -> Event | None:
    try:
        return event_from_dict(data)
    except EventValidationError:
        return None


@settings(max_examples=600, deadline=None)
@given(data=decoded_lines(), expected=st.sampled_from([3, 4]))
def test_the_replay_builders_accept_only_what_event_from_dict_accepts(data: Any, expected: int) -> None:
    general = general_verdict(data)
    for builders in (BUILDERS_WITH_V, BUILDERS_WITHOUT_V):
        try:
            built = builders[data["type"]](data, expected)
        except Exception:
            continue
        assert general is not None, data
        assert built == general and built.sequence == expected
        assert built.to_json() == general.to_json()


@pytest.mark.parametrize("type_name", EVENT_TYPES)
@pytest.mark.parametrize("turn_id", ["turn_1", None])
def test_lines_as_append_writes_them_take_the_fast_path(type_name: str, turn_id: str | None) -> None:
    model = PAYLOADS[type_name]
    optional: dict[str, Any] = {
        name: None for name, info in model.model_fields.items() if not info.is_required()
    }
    for fields in ({}, optional):  # every field, and only the required ones
        event = build_event(5, type_name, turn_id=turn_id, **fields)
        data = orjson.loads(event.to_json())
        assert BUILDERS_WITH_V[type_name](data, 5) == event
        del data["v"]
        assert BUILDERS_WITHOUT_V[type_name](data, 5) == event


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=decoded_lines())
def test_replay_names_the_same_error_as_event_from_dict(tmp_path: Path, data: Any) -> None:
    head = [build_event(1, "session.created"), build_event(2)]
    path = tmp_path / "sess_test.jsonl"
    path.write_bytes(lines_of(head) + orjson.dumps(data) + b"\n" + lines_of([build_event(4)]))
    general = general_verdict(data)
    if general is not None and general.sequence == 3 and general.session_id == "sess_test":
        assert list(JsonlEventLog(path).replay("strict")) == [*head, general, build_event(4)]
        return
    seen: list[Event] = []
    with pytest.raises(EventLogDecodeError) as caught:
        for event in JsonlEventLog(path).replay("strict"):
            seen.append(event)
    assert seen == head
    assert caught.value.line_number == 3
    if general is None:
        with pytest.raises(EventValidationError) as reason:
            event_from_dict(data)
        assert caught.value.reason == reason.value.reason
    elif general.session_id != "sess_test":
        assert caught.value.reason.startswith(f"sessionId {general.session_id!r} is not this log's")
    else:
        assert "(expected 3)" in caught.value.reason


def test_a_log_without_v_replays_the_same(tmp_path: Path, make_session) -> None:
    events = make_session(40)
    lines = [orjson.loads(event.to_json()) for event in events]
    for n in range(10, 20):  # a stretch without `v`, as another writer may leave it out
        del lines[n]["v"]
    path = tmp_path / "sess_test.jsonl"
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    assert list(JsonlEventLog(path).replay("strict")) == events
    assert list(JsonlEventLog(path).replay("strict", start_line=15)) == events[15:]


@pytest.mark.parametrize("batch", [1, 5, 64, 1000])
def test_replay_reads_in_any_batch_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make_session, batch: int
) -> None:
    monkeypatch.setattr(jsonl_module, "_BATCH", batch)
    events = make_session(30)
    events[7] = build_event(
        8, "tool.completed", result="y" * 3000, toolCallId="c", tool="shell"
    )  # a line longer than many reads
    path = tmp_path / "sess_test.jsonl"
    path.write_bytes(lines_of(events) + b'{"torn')
    assert list(JsonlEventLog(path).replay()) == events
    assert list(JsonlEventLog(path).replay(start_line=7)) == events[7:]
    with pytest.raises(EventLogDecodeError) as caught:
        list(JsonlEventLog(path).replay("strict"))
    assert caught.value.line_number == 31


NO_REQUIRED_FIELD = [
    name
    for name, model in PAYLOADS.items()
    if not any(info.is_required() for info in model.model_fields.values())
]


@pytest.mark.parametrize("payload", [[], [1], "x", 1, None])
def test_a_payload_that_is_not_an_object_is_refused_by_every_path_even_with_no_required_field(
    tmp_path: Path, payload: Any
) -> None:
    # A model with no required field has no subscript that proves its payload a dict: the fast
    # paths once took `[]` (its length is that of an empty object) and crashed on `[1]`.
    assert NO_REQUIRED_FIELD  # (session.budget, at least)
    for type_name in NO_REQUIRED_FIELD:
        data = orjson.loads(build_event(3, type_name).to_json())
        data["payload"] = payload
        with pytest.raises(EventValidationError, match=r"^payload"):
            event_from_dict(data)
        for builders in (BUILDERS_WITH_V, BUILDERS_WITHOUT_V):
            line = dict(data) if builders is BUILDERS_WITH_V else {k: v for k, v in data.items() if k != "v"}
            with pytest.raises((_Rejected, KeyError, TypeError)):
                builders[type_name](line, 3)
        path = tmp_path / "sess_test.jsonl"
        head = [build_event(1, "session.created"), build_event(2)]
        path.write_bytes(lines_of(head) + orjson.dumps(data) + b"\n")
        with pytest.raises(EventLogDecodeError) as caught:
            list(JsonlEventLog(path).replay("strict"))
        assert caught.value.line_number == 3 and caught.value.reason.startswith("payload")
