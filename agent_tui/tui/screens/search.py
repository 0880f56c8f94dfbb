"""The search screen: find a session by what was said in it, and open it at that event.

A thread keeps the search index of the sessions directory current while the screen is open: it
brings in what the logs gained (with a progress bar the first time, when there may be much to
read), then looks again every `POLL_SECONDS`; each time something new came in, the results are
asked again. Queries run in a thread of their own on a second connection (SQLite lets one read
while the other writes), a moment after the typing stops.

Results are listed by session and turn, newest session first: the event's sequence, what kind
of text it is (prompt, answer, command, output, …) and the line that matched, its words marked.
Every text from a log passes through `visible`, so a log cannot send the terminal escapes.
`enter` on a result opens the session in the scrubber at that event (`SearchReplayScreen`);
`esc` comes back here, and `esc` here goes back to the dashboard.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Input, Label, OptionList, ProgressBar
from textual.widgets.option_list import Option

from agent_tui.events import counted, visible
from agent_tui.ports import (
    Hit,
    Progress,
    QueryError,
    SearchError,
    SearchIndex,
    SearchResults,
    excerpt,
    index_path,
)
from agent_tui.tui.screens.search_replay import SearchReplayScreen
from agent_tui.tui.text_entry import focus_now

POLL_SECONDS = 2.0
"""How often the logs are looked at again while the screen is open."""
TYPING_PAUSE = 0.15
"""How long after the last key a query is asked."""
LIMIT = 200
PROGRESS_SECONDS = 0.1
"""The progress bar is moved at most this often."""
MUTED = "$text-muted"
MARKED = "bold reverse $text-accent"
KIND_STYLE = {"prompt": "bold $text-primary", "answer": "$text-success", "error": "$text-error"}
HINT = 'Words (all of them), prefix* and "a phrase": whole words, not parts of words.'


@dataclass
class SearchSynced(Message):
    """The index caught up with the logs; `rows` new texts came in; `problem` if it could not."""

    rows: int
    files: int
    corrupt: int
    problem: str | None = None


@dataclass
class SearchProgressed(Message):
    progress: Progress


@dataclass
class SearchAnswered(Message):
    text: str
    results: SearchResults | None
    error: str | None = None


class SearchScreen(Screen[None]):
    """Search the logs in `sessions_dir` (the index at `index_file`, default its usual place),
    and the logs `more_logs` gives (the terminal agents' sessions read so far, converted)."""

    BINDINGS = [
        Binding("escape", "close", "Back", priority=True),
        Binding("down", "to_results", "Results", show=False),
    ]

    def __init__(
        self,
        sessions_dir: Path,
        index_file: Path | None = None,
        more_logs: Callable[[], list[Path]] | None = None,
    ) -> None:
        super().__init__()
        self.sessions_dir = sessions_dir
        self.more_logs = more_logs
        self.index_file = index_file or index_path(sessions_dir)
        self.results: SearchResults | None = None
        self.hits: list[Hit] = []
        self.synced = False
        """Whether the index has caught up with the logs once."""
        self.answered = 0
        """How many answers to queries have been shown (for tests)."""
        self._stopping = threading.Event()
        self._query_lock = threading.Lock()
        self._query_index: SearchIndex | None = None
        self._typing: Timer | None = None
        self._logs_note = ""
        self._progress_shown = 0.0

    def compose(self) -> ComposeResult:
        with Vertical(id="search-pane"):
            yield Input(placeholder='words, prefix*, "a phrase"', id="search-input")
            with Horizontal(id="search-status-row"):
                yield Label(HINT, id="search-status")
                yield ProgressBar(total=None, show_eta=False, id="search-progress")
            yield OptionList(id="search-results")
        yield Footer()

    def on_mount(self) -> None:
        # Content, not a str: a directory's name is not markup.
        title = Content(f"Search sessions · {visible(self.sessions_dir.name)}")
        self.query_one("#search-pane").border_title = title
        focus_now(self.query_one("#search-input", Input))
        self._keep_current()

    def on_unmount(self) -> None:
        self._stopping.set()
        with self._query_lock:
            if self._query_index is not None:
                self._query_index.close()
                self._query_index = None

    # -- the index, kept current -------------------------------------------------------------------
    def _logs(self) -> list[Path]:
        more = self.more_logs() if self.more_logs is not None else []
        try:
            return sorted(self.sessions_dir.glob("*.jsonl")) + more
        except OSError:
            return more

    @work(thread=True, exclusive=True, group="search-index", exit_on_error=False)
    def _keep_current(self) -> None:
        try:
            index = SearchIndex.open(self.index_file)
        except SearchError as error:
            self.post_message(SearchSynced(0, 0, 0, problem=str(error)))
            return
        with index:
            while not self._stopping.is_set():
                try:
                    report = index.sync(self._logs(), progress=self._progressed, stop=self._stopping.is_set)
                except SearchError as error:  # said, and tried again at the next look
                    self.post_message(SearchSynced(0, 0, 0, problem=str(error)))
                else:
                    corrupt = sum(status.corrupt for status in report.corrupt)
                    self.post_message(SearchSynced(report.rows, report.files, corrupt))
                self._stopping.wait(POLL_SECONDS)

    def _progressed(self, progress: Progress) -> None:
        # Called once per log: thousands of logs make thousands of calls; the bar needs a few.
        now = time.monotonic()
        if now - self._progress_shown >= PROGRESS_SECONDS or progress.done_files == progress.total_files:
            self._progress_shown = now
            self.post_message(SearchProgressed(progress))

    @on(SearchProgressed)
    def _show_progress(self, message: SearchProgressed) -> None:
        progress = message.progress
        if self.synced or progress.total_bytes < 1:
            return
        bar = self.query_one("#search-progress", ProgressBar)
        bar.display = True
        bar.update(total=progress.total_bytes, progress=progress.done_bytes)
        label = f"Indexing {progress.done_files:,} / {counted(progress.total_files, 'log')}…"
        self.query_one("#search-status", Label).update(label)

    @on(SearchSynced)
    def _synced(self, message: SearchSynced) -> None:
        first = not self.synced
        self.synced = True
        self.query_one("#search-progress", ProgressBar).display = False
        if message.problem is not None:
            self._set_status(Content.styled(message.problem, "bold $text-error"))
            return
        if message.files == 0:
            self._set_status(Content.styled(f"No logs in {self.sessions_dir} yet.", MUTED))
            return
        note = f" · {counted(message.corrupt, 'corrupt line')} skipped" if message.corrupt else ""
        self._logs_note = f"{counted(message.files, 'log')}{note}"
        if first or message.rows:
            self._ask()

    # -- queries -------------------------------------------------------------------------------------
    @on(Input.Changed, "#search-input")
    def _typed(self, event: Input.Changed) -> None:
        if self._typing is not None:
            self._typing.stop()
        self._typing = self.set_timer(TYPING_PAUSE, self._ask)

    @on(Input.Submitted, "#search-input")
    def _submitted(self, event: Input.Submitted) -> None:
        if self._typing is not None:
            self._typing.stop()
        if self.hits and self.results is not None and self.results.query.text == event.value:
            self.action_to_results()
        else:
            self._ask()

    def _ask(self) -> None:
        self._typing = None
        text = self.query_one("#search-input", Input).value
        if not text.strip():
            self._show(None)
            self._set_status(Content.styled(HINT, MUTED))
            return
        self._search(text)

    @work(thread=True, exclusive=True, group="search-query", exit_on_error=False)
    def _search(self, text: str) -> None:
        try:
            with self._query_lock:
                if self._stopping.is_set():
                    return
                if self._query_index is None:
                    self._query_index = SearchIndex.open(self.index_file)
                results = self._query_index.search(text, limit=LIMIT)
        except (QueryError, SearchError) as error:
            self.post_message(SearchAnswered(text, None, str(error)))
            return
        self.post_message(SearchAnswered(text, results))

    @on(SearchAnswered)
    def _answered(self, message: SearchAnswered) -> None:
        if message.text != self.query_one("#search-input", Input).value:
            return  # typed on since: its own answer follows
        self.answered += 1
        if message.results is None:
            self._show(None)
            self._set_status(Content.styled(message.error or "", "$text-warning"))
            return
        self._show(message.results)

    def _set_status(self, status: Content) -> None:
        self.query_one("#search-status", Label).update(status)

    def _show(self, results: SearchResults | None) -> None:
        self.results = results
        self.hits = list(results.hits) if results is not None else []
        options = self.query_one("#search-results", OptionList)
        options.clear_options()
        if results is None:
            return
        if not results.hits:
            self._set_status(Content.styled(f"No matches for {visible(results.query.text)!r}.", MUTED))
            return
        width = max(20, self.size.width - 22)
        rows: list[Option] = []
        session = turn = None
        for number, hit in enumerate(results.hits):
            if hit.path != session:
                session, turn = hit.path, None
                header = Content.assemble(
                    (visible(hit.session_name), "bold"),
                    (f"  {visible(hit.session_id)}", MUTED),
                    (f"  {visible(hit.path.name)}", MUTED) if hit.path.stem != hit.session_id else "",
                )
                rows.append(Option(header, disabled=True))
            if hit.turn_id != turn:
                turn = hit.turn_id
                rows.append(Option(Content.styled(f" {visible(turn) or '(no turn)'}", MUTED), disabled=True))
            shown = excerpt(hit.text, results.query, width=width)
            parts: list[tuple[str, str] | str] = [
                (f"  {hit.sequence:>5} ", MUTED),
                (f"{hit.kind:<8}", KIND_STYLE.get(hit.kind, "$text-secondary")),
            ]
            parts += [(text, MARKED) if marked else text for text, marked in shown.visible_parts()]
            rows.append(Option(Content.assemble(*parts), id=f"hit-{number}"))
        options.add_options(rows)
        sessions = len({hit.path for hit in results.hits})
        total = f"{results.total:,}+" if results.more else f"{results.total:,}"
        first = f" (the newest {len(results.hits)} shown)" if len(results.hits) < results.total else ""
        status = (
            f"{total} matches in {counted(sessions, 'session')}{first} · {self._logs_note} · enter opens one"
        )
        self._set_status(Content.styled(status, MUTED))

    # -- keys ----------------------------------------------------------------------------------------
    def action_to_results(self) -> None:
        options = self.query_one("#search-results", OptionList)
        if not self.hits:
            return
        focus_now(options)
        if options.highlighted is None or options.get_option_at_index(options.highlighted).disabled:
            options.highlighted = options.get_option_index("hit-0")

    @on(OptionList.OptionSelected, "#search-results")
    def _open(self, event: OptionList.OptionSelected) -> None:
        option_id = event.option.id or ""
        if not option_id.startswith("hit-"):
            return
        hit = self.hits[int(option_id[4:])]
        self.app.push_screen(SearchReplayScreen(hit.path, hit.session_id, hit.sequence))

    def action_close(self) -> None:
        if self.focused is self.query_one("#search-results", OptionList):
            focus_now(self.query_one("#search-input", Input))
            return
        self.app.pop_screen()
