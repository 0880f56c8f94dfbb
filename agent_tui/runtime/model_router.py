"""The models a dashboard can start agents with, and the provider that sends each session to its own.

Invariants:
- a `ModelChoice` builds its provider at most once, on first use (a profile that is never
  chosen never opens a client);
- `ProviderRouter` is one `ModelProvider` for the engine: each request goes to the provider of
  its session's choice; a sub-agent, which nobody chose a model for, uses its root session's;
  a session with no choice (reopened from a log of an unknown model) uses the default, the first
  choice;
- `window_for(session_id)` is the window of the model that answers that session (the engine
  asks it once per model call); `max_context_tokens` is the default choice's.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

from agent_tui.costs.budgets import BudgetLimit
from agent_tui.engine.provider import ModelProvider, ModelRequest, ProviderChunk
from agent_tui.events.session_tree import path_to_root
from agent_tui.providers.windows import DEFAULT_CONTEXT_WINDOW


@dataclass(eq=False)
class ModelChoice:
    """One entry of the new-agent form's model list.

    Args:
        name: what the user picks (a profile name, or `demo`).
        label: what the form shows beside it (`openai · gpt-4o-mini`).
        build: makes the provider (called once, when first needed).
        provider: recorded in `session.created` (`openai`, `anthropic`, or None for scripted).
        model: recorded in `session.created`.
        budget: a new root agent's budget on this model when the form sets none (its
            profile's, or the config's `[budget]`).
    """

    name: str
    label: str
    build: Callable[[], ModelProvider]
    provider: str | None = None
    model: str | None = None
    budget: BudgetLimit | None = None
    _built: ModelProvider | None = field(default=None, repr=False)

    def get(self) -> ModelProvider:
        if self._built is None:
            self._built = self.build()
        return self._built

    async def aclose(self) -> None:
        """Close the provider's HTTP client, if it was built and has one."""
        close = getattr(self._built, "aclose", None)
        if close is not None:
            await close()


class ProviderRouter:
    """A `ModelProvider` that forwards each session's calls to the provider chosen for it.

    Args:
        choices: the models, the default first (at least one).
        parent_of: a session's parent id, or None for a root (the engine's `budgets.index.parent_of`).
    """

    def __init__(self, choices: list[ModelChoice], parent_of: Callable[[str], str | None]) -> None:
        if not choices:
            raise ValueError("a router needs at least one model choice")
        self.choices = {choice.name: choice for choice in choices}
        self.default = choices[0]
        self.parent_of = parent_of
        """A session's parent (its owner may set it once the engine whose family it is exists)."""
        self._by_session: dict[str, ModelChoice] = {}
        self._window: int | None = None

    @property
    def max_context_tokens(self) -> int:
        """The default choice's window (or what was set here, overriding it)."""
        if self._window is not None:
            return self._window
        return self.default.get().max_context_tokens

    @max_context_tokens.setter
    def max_context_tokens(self, tokens: int) -> None:
        self._window = tokens

    def window_for(self, session_id: str) -> int:
        """The context window of the model that answers `session_id` (what was set here, if
        anything, overrides it; a model that cannot be built yet reports the default's)."""
        if self._window is not None:
            return self._window
        try:
            return self.choice_for(session_id).get().max_context_tokens
        except Exception:  # building it fails again, with its message, when the call is made
            return DEFAULT_CONTEXT_WINDOW

    def output_for(self, session_id: str) -> int | None:
        """The most output tokens the model that answers `session_id` may send (None: unknown),
        for a budget's preflight."""
        try:
            settings = getattr(self.choice_for(session_id).get(), "settings", None)
        except Exception:
            return None
        limit = getattr(settings, "max_output_tokens", None)
        return limit if isinstance(limit, int) else None

    def assign(self, session_id: str, choice: ModelChoice) -> None:
        """Send `session_id`'s calls (and its sub-agents') to `choice`."""
        self._by_session[session_id] = choice

    def choice_for(self, session_id: str) -> ModelChoice:
        """The choice assigned to the session, else to its nearest ancestor, else the default."""
        by_session = self._by_session
        for sid in reversed(path_to_root(session_id, self.parent_of, str)):
            choice = by_session.get(sid)
            if choice is not None:
                return choice
        return self.default

    def stream(self, request: ModelRequest) -> AsyncIterator[ProviderChunk]:
        return self.choice_for(request.session_id).get().stream(request)
