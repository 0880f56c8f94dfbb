"""The command palette's own provider: whatever the current screen offers (jump, stop, …).

Screens list their commands with `palette_commands()`; this provider only matches and runs them,
so the live dashboard and the replay offer what makes sense for each. A command's name and help
may hold a session's name (from its log): they are shown as text (`visible`), never as markup. Theme switching and the
other system commands come from Textual's own provider, which the app keeps.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content
from textual.markup import escape

from agent_tui.events import visible

MAX_DISCOVERED = 20


@dataclass(frozen=True)
class PaletteCommand:
    """One palette entry. `discover`: listed before the user types anything."""

    name: str
    help: str
    run: Callable[[], Any]
    discover: bool = True


@runtime_checkable
class OffersCommands(Protocol):
    """A screen with commands of its own for the palette."""

    def palette_commands(self) -> list[PaletteCommand]: ...


class ScreenCommands(Provider):
    """Offers the commands of the screen the palette was opened from."""

    def _commands(self) -> list[PaletteCommand]:
        screen = self.screen
        return screen.palette_commands() if isinstance(screen, OffersCommands) else []

    async def discover(self) -> Hits:
        shown = 0
        for command in self._commands():
            if command.discover and shown < MAX_DISCOVERED:
                shown += 1
                yield DiscoveryHit(
                    Content(visible(command.name)), command.run, help=escape(visible(command.help))
                )

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for command in self._commands():
            name = visible(command.name)  # a session's name comes from its log
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), command.run, help=escape(visible(command.help)))
