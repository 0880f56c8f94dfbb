"""The replay scrubber: where the cursor is in the timeline, and a bar to click on.

One line: play state, `n / total`, the event at the cursor (type, agent, time), a progress bar,
then the follow and speed flags. While the logs load it shows the loader's progress instead.
"""

from __future__ import annotations

from textual import events
from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

from agent_tui.tui.messages import ScrubRequested

MUTED = "$text-muted"


class Scrubber(Widget):
    """Position, event at the cursor, and a clickable bar over the whole timeline."""

    DEFAULT_CSS = """
    Scrubber {
        height: 1;
        padding: 0 1;
        background: $panel;
    }
    """

    position: reactive[int] = reactive(0)
    total: reactive[int] = reactive(0)
    event_label: reactive[str] = reactive("")
    playing: reactive[bool] = reactive(False)
    follow: reactive[bool] = reactive(False)
    speed: reactive[int] = reactive(20)
    # What to show instead of the bar (loading progress, a load error); None shows the bar. Not
    # `loading`: that is Textual's own flag, which covers the widget with a spinner.
    notice: reactive[str | None] = reactive("Loading logs…")

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._bar_span: tuple[int, int] = (0, 0)

    def render(self) -> Content:
        width = self.content_region.width or self.size.width
        if self.notice is not None:
            return Content.styled(self.notice, "$text-accent")
        play = ("▶ playing", "bold $text-success") if self.playing else ("‖ paused", MUTED)
        left = Content.assemble(
            play,
            "  ",
            (f"{self.position:,}", "bold"),
            (" / ", MUTED),
            f"{self.total:,}",
            "  ",
            (self.event_label or "start", "$text-accent"),
        )
        right = Content.assemble(
            ("follow ●" if self.follow else "follow ○", "$text-success" if self.follow else MUTED),
            ("  ", ""),
            (f"{self.speed}/s", MUTED),
        )
        bar_width = width - left.cell_length - right.cell_length - 4
        if bar_width < 8:
            self._bar_span = (0, 0)
            return Content.assemble(left, "  ", right)
        start = left.cell_length + 2
        self._bar_span = (start, start + bar_width)
        return Content.assemble(left, "  ", self._bar(bar_width), "  ", right)

    def _bar(self, width: int) -> Content:
        done = round(width * self.position / self.total) if self.total else 0
        done = max(0, min(width, done))
        if done == width:
            return Content.styled("━" * width, "$accent")
        return Content.assemble(
            ("━" * done, "$accent"),
            ("╸", "$accent") if done else ("", ""),
            ("─" * (width - done - (1 if done else 0)), "$foreground-muted"),
        )

    def on_click(self, event: events.Click) -> None:
        start, end = self._bar_span
        x = event.x - self.styles.padding.left
        if end > start and start <= x < end and self.total:
            fraction = (x - start + 0.5) / (end - start)
            self.post_message(ScrubRequested(round(fraction * self.total)))
