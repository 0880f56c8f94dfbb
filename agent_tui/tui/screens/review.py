"""The review screen: a session's whole change against its base, file by file, and what finishes it.

On the left the changed files (`A` added, `M` modified, `D` deleted, with `+added −removed`);
on the right the highlighted diff of the highlighted file (the approval dialog's diff view).
Keys: `c` commit (the message prefilled from the session's prompt, editable), `m` merge into the
branch it came from, `d` discard (asks first; the screen stays, saying so, until `escape`), `w` rewind a turn (pick it, see what it writes
back, confirm; protected paths are asked about on their own), `r` reads the change again,
`escape` goes back. Commit, merge and discard are a worktree session's; a directory session's
change is shown (and its turns can be rewound) but is finished in the user's own checkout.

Every action is a command (`Commit`, `Merge`, ...) given through the run's `CommandClient`: the
executor over the workbench here, or the session's host for an attached dashboard. What came of
the last one (done, or refused and why: nothing was changed) is said whole on the screen itself,
in the line under the title, until the next action; it is also a notice (`N` lists them). A review read from a host is bounded: what was cut is said in the top line and in a
notice, and in the cut file's diff.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable
from typing import TypeVar

from pydantic import TypeAdapter
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from agent_tui.ports import (
    Adapters,
    Command,
    CommandClient,
    Commit,
    Discard,
    FinishRefused,
    Merge,
    PlanRewind,
    ReadReview,
    Review,
    ReviewFile,
    Rewind,
    Turns,
    read_result,
)
from agent_tui.tui.formatting import MUTED, short_path
from agent_tui.tui.marked import marked
from agent_tui.tui.screens.confirm import ConfirmScreen
from agent_tui.tui.screens.review_dialogs import CommitMessageScreen, TurnPickScreen, rewind_question
from agent_tui.tui.widgets.diff_view import DiffView

T = TypeVar("T")
_MARK = {"added": ("A", "$text-success"), "modified": ("M", "$text-warning"), "deleted": ("D", "$text-error")}


def file_label(item: ReviewFile) -> Content:
    """One line of the file list: `A path +3 −1`."""
    mark, style = _MARK.get(item.status, ("T", MUTED))
    counts = "binary" if item.binary else f"+{item.added} −{item.removed}"
    parts: list[Content | tuple[str, str]] = [(mark + " ", f"bold {style}"), marked(item.path)]
    if item.symlink:  # where a link points matters more than its text: said, in warning colour
        parts.append((" (symlink)", "bold $text-warning"))
    parts.append((f"  {counts}", MUTED))
    return Content.assemble(*parts)


def review_title(review: Review, agent_path: str) -> Content:
    """The top line: whose change, where, against what, how big."""
    added = sum(item.added for item in review.files)
    removed = sum(item.removed for item in review.files)
    count = len(review.files) + review.more_files
    files = f"{count} file{'s' if count != 1 else ''}"
    where = (
        f"worktree {short_path(review.root)} ({review.branch})"
        if review.kind == "worktree"
        else f"directory {short_path(review.root)}"
    )
    parts: list[Content | tuple[str, str] | str] = [
        ("Review ", "bold"),
        marked(agent_path, "bold $text-accent"),
        (" · ", MUTED),
        f"{files} +{added} −{removed}",
    ]
    if review.uncommitted:
        parts += [(" · ", MUTED), (f"{review.uncommitted} uncommitted", "$text-warning")]
    if review.cut:
        parts += [(" · ", MUTED), ("diff cut", "$text-warning")]
    parts += [(" · against ", MUTED), marked(review.base_label), (" · ", MUTED), marked(where)]
    return Content.assemble(*parts)


class ReviewScreen(Screen[None]):
    """A session's change, and commit / merge / discard / rewind.

    Args:
        commands: where its commands go (the executor over the workbench, or the session's host).
        review: the change as read when the screen was opened.
        agent_path: whom it is (`lead`), for the title and notices.
    """

    BINDINGS = [
        Binding("escape", "dismiss", "Back"),
        Binding("c", "commit", "Commit"),
        Binding("m", "merge", "Merge"),
        Binding("d", "discard", "Discard"),
        Binding("w", "rewind", "Rewind"),
        Binding("r", "reload", "Reload"),
    ]

    def __init__(self, commands: CommandClient, review: Review, agent_path: str) -> None:
        super().__init__()
        self.commands = commands
        self.review = review
        self.agent_path = agent_path
        self.shown_file: str | None = None
        self.finished: list[str] = []
        """What was done here (`committed`, `merged`, `discarded`, `rewound`), for tests."""
        self.result = ""
        """What the result line says (empty: no action yet), for tests."""

    def compose(self) -> ComposeResult:
        yield Static(review_title(self.review, self.agent_path), id="review-title")
        yield Static(id="review-result")
        with Horizontal(id="review-body"):
            yield OptionList(id="review-files")
            with VerticalScroll(id="review-diff"):
                yield Vertical(id="review-diff-body")
        yield Footer()

    def on_mount(self) -> None:
        self._show_review()
        self.query_one("#review-files", OptionList).focus()
        self._say_cut()

    def say(self, message: str, *, title: str, severity: str = "done", timeout: float = 5) -> None:
        """Say what came of an action in the result line (whole, until the next one) and as a
        notice. `severity` is `done`, `warning` or `error`."""
        self.result = f"{title}: {message}"
        glyph = {"done": "✓", "warning": "!", "error": "✗"}[severity]
        line = self.query_one("#review-result", Static)
        line.update(Content.assemble((f"{glyph} {title}: ", "bold"), marked(" ".join(message.split()))))
        line.set_classes(f"-shown -{severity}")
        level = {"done": "information", "warning": "warning", "error": "error"}[severity]
        self.notify(message, title=title, severity=level, timeout=timeout)  # type: ignore[arg-type]

    def _say_cut(self) -> None:
        if self.review.cut:
            self.notify(self.review.cut, title="Part of the diff is not here", severity="warning", timeout=10)

    # -- showing ---------------------------------------------------------------------------------
    def _show_review(self) -> None:
        review = self.review
        self.query_one("#review-title", Static).update(review_title(review, self.agent_path))
        files = self.query_one("#review-files", OptionList)
        files.border_title = "Files"
        files.clear_options()
        files.add_options([Option(file_label(item), id=item.path) for item in review.files])
        if review.more_files:
            files.add_option(Option(Content.styled(f"… {review.more_files} more", MUTED), disabled=True))
        if review.files:
            files.highlighted = 0
            self._show_file(review.files[0])
        else:
            self._show_nothing()

    def _show_nothing(self) -> None:
        self.shown_file = None
        diff = self.query_one("#review-diff", VerticalScroll)
        diff.border_title = "No change"
        body = self.query_one("#review-diff-body", Vertical)
        body.remove_children()
        text = (
            "Discarded: the worktree and its branch are gone."
            if "discarded" in self.finished
            else f"Nothing differs from {self.review.base_label}."
        )
        body.mount(Static(marked(text), classes="review-note"))

    def _show_file(self, item: ReviewFile) -> None:
        self.shown_file = item.path
        diff = self.query_one("#review-diff", VerticalScroll)
        diff.border_title = marked(item.path)
        diff.border_subtitle = f"{item.status} symbolic link" if item.symlink else item.status
        body = self.query_one("#review-diff-body", Vertical)
        body.remove_children()
        preview = item.preview()
        if preview is not None:
            body.mount(DiffView(preview))
        elif item.binary:
            body.mount(
                Static(Content.styled("A binary file: no diff to show.", MUTED), classes="review-note")
            )
        else:
            # A diff without the texts (too big, or cut for the bus). No id: the widget it
            # replaces may still be leaving when the next file's is mounted.
            body.mount(Static(marked(item.diff or "(too big to show)"), classes="review-plain"))
        diff.scroll_home(animate=False)

    @on(OptionList.OptionHighlighted, "#review-files")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        chosen = next((item for item in self.review.files if item.path == event.option.id), None)
        if chosen is not None and chosen.path != self.shown_file:
            self._show_file(chosen)

    @on(OptionList.OptionSelected, "#review-files")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        self.query_one("#review-diff", VerticalScroll).focus()

    # -- acting ----------------------------------------------------------------------------------
    async def _ask(self, command: Command, adapter: TypeAdapter[T], key: str, what: str) -> T | None:
        """What `command` gives back (read as `key`), or None after a notice saying why not."""
        try:
            return read_result(await self.commands.send(command), adapter, key)
        except FinishRefused as error:
            self.say(str(error), title=f"Not {what}", severity="error", timeout=15)
            return None

    @work(exclusive=True, group="review-reload", exit_on_error=False)
    async def action_reload(self) -> None:
        if not self._still_there():
            return
        review = await self._ask(
            ReadReview(sessionId=self.review.session_id), Adapters.review, "review", "read again"
        )
        if review is None:
            return
        self.review = review
        self._show_review()
        self._say_cut()

    def _still_there(self) -> bool:
        """Whether the session was not discarded here (after that, only `escape` is left)."""
        if "discarded" not in self.finished:
            return True
        self.say("it was discarded; esc goes back", title="Nothing to do", severity="warning")
        return False

    def _needs_worktree(self) -> bool:
        if not self._still_there():
            return False
        if self.review.can_finish:
            return True
        self.say(
            "this session works in your own directory: commit or undo its changes there yourself "
            "(w rewinds one of its turns).",
            title="Not here",
            severity="warning",
            timeout=8,
        )
        return False

    def action_commit(self) -> None:
        if self._needs_worktree():
            self._run(self._commit())

    async def _commit(self) -> None:
        message = await self.app.push_screen_wait(CommitMessageScreen(self.review.message))
        if message is None:
            return
        command = Commit(sessionId=self.review.session_id, message=message)
        done = await self._ask(command, Adapters.commit, "commit", "committed")
        if done is None:
            return
        self.finished.append("committed")
        self.say(f"{done.files} file(s) as {done.commit[:7]}.", title="Committed")
        await self._reread()

    def action_merge(self) -> None:
        if self._needs_worktree():
            self._run(self._merge())

    async def _merge(self) -> None:
        review = self.review
        into = review.base_branch or "the branch it came from"
        question = (
            f"Merge {review.branch} into {into}? Only into a checkout with no uncommitted change; "
            "a conflict merges nothing."
        )
        if not await self._confirm("Merge", question, "Merge"):
            return
        done = await self._ask(Merge(sessionId=review.session_id), Adapters.merge, "merge", "merged")
        if done is None:
            return
        self.finished.append("merged")
        how = "fast-forwarded" if done.fast_forward else f"merged as {done.commit[:7]}"
        self.say(f"{review.branch} {how} into {done.into}.", title="Merged")
        await self._reread()

    def action_discard(self) -> None:
        if self._needs_worktree():
            self._run(self._discard())

    async def _discard(self) -> None:
        review = self.review
        question = (
            f"Discard everything {self.agent_path} did? Its worktree {short_path(review.root)} is "
            f"removed and its branch {review.branch} deleted, committed work included; the session "
            "is closed (its log stays)."
        )
        if not await self._confirm("Discard", question, "Discard"):
            return
        reply = await self.commands.send(Discard(sessionId=review.session_id))
        if not reply.ok:
            self.say(reply.message or "the host refused", title="Not discarded", severity="error", timeout=15)
            return
        self.finished.append("discarded")
        self.review = dataclasses.replace(review, files=(), more_files=0, uncommitted=0)
        self._show_review()
        self.say(
            f"{self.agent_path}: worktree removed, branch deleted, session closed (its log stays); "
            "esc goes back.",
            title="Discarded",
        )

    def action_rewind(self) -> None:
        if self._still_there():
            self._run(self._rewind())

    async def _rewind(self) -> None:
        """Pick a turn, see what rewinding it writes back, confirm (protected paths on their
        own), then rewind it."""
        session_id = self.review.session_id
        turns = await self._ask(Turns(sessionId=session_id), Adapters.turns, "turns", "rewound")
        if turns is None:
            return
        if not turns:
            self.say("this session has no turn to rewind.", title="Not rewound", severity="warning")
            return
        turn_id = await self.app.push_screen_wait(TurnPickScreen(list(turns)))
        if turn_id is None:
            return
        number = next((turn.number for turn in turns if turn.turn_id == turn_id), 0)
        plan = await self._ask(
            PlanRewind(sessionId=session_id, turnId=turn_id), Adapters.plan, "plan", "rewound"
        )
        if plan is None or not await self._confirm(*rewind_question(plan, number), "Rewind"):
            return
        allow_protected = False
        if plan.protected:
            names = ", ".join(item.shown for item in plan.protected[:3])
            question = (
                f"It also writes protected paths back ({names}): they hold hooks, git config or "
                "agent-tui's permissions. Write them too? (No: they are left as they are.)"
            )
            allow_protected = await self._confirm("Protected paths", question, "Write them too")
        command = Rewind(sessionId=session_id, turnId=turn_id, allowProtected=allow_protected)
        result = await self._ask(command, Adapters.rewind, "rewind", "rewound")
        if result is None:
            return
        self.finished.append("rewound")
        put_back = sum(1 for item in result.files if item.action != "skipped")
        message = f"{put_back} file(s) put back."
        if result.incomplete:
            message += f" Not undone: {result.incomplete}."
        self.say(message, title="Rewound", severity="warning" if result.incomplete else "done", timeout=10)
        await self._reread()

    async def _reread(self) -> None:
        reply = await self.commands.send(ReadReview(sessionId=self.review.session_id))
        try:
            self.review = read_result(reply, Adapters.review, "review")
        except FinishRefused:
            return
        self._show_review()

    async def _confirm(self, title: str, question: str, button: str) -> bool:
        """Whether the user said yes to `question` (a `ConfirmScreen`; in a worker)."""
        return await self.app.push_screen_wait(ConfirmScreen(title, question, button))

    def _run(self, action: Awaitable[None]) -> None:
        self.run_worker(action, group="review-action", exclusive=True, exit_on_error=False)
