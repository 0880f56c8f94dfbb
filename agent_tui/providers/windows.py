"""What we know of models without asking them: context windows and output limits per family.

A small built-in table, matched on the start of the model name (case-insensitive, after a
router's `vendor/` prefix such as OpenRouter's `openai/gpt-4.1`); the longest matching prefix
wins. A model the table does not know gets `DEFAULT_CONTEXT_WINDOW`, a size most servers
handle; a profile's `context_window` overrides both (a local server's window is whatever it was
started with, so set it there).
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_CONTEXT_WINDOW = 32_768


@dataclass(frozen=True)
class ModelFamily:
    """Args:
    prefix: how the family's model names start (lower case).
    context_window: tokens of input and output together.
    max_output_tokens: the most one answer may hold, where the API requires a number (Anthropic).
    """

    prefix: str
    context_window: int
    max_output_tokens: int | None = None


FAMILIES: tuple[ModelFamily, ...] = (
    ModelFamily("gpt-5", 400_000),
    ModelFamily("gpt-4.1", 1_047_576),
    ModelFamily("gpt-4o", 128_000),
    ModelFamily("gpt-4-turbo", 128_000),
    ModelFamily("gpt-4", 8_192),
    ModelFamily("gpt-3.5-turbo", 16_385),
    ModelFamily("o1-mini", 128_000),
    ModelFamily("o1", 200_000),
    ModelFamily("o3", 200_000),
    ModelFamily("o4-mini", 200_000),
    ModelFamily("claude-3-haiku", 200_000, 4_096),
    ModelFamily("claude-3-opus", 200_000, 4_096),
    ModelFamily("claude-3-sonnet", 200_000, 4_096),
    ModelFamily("claude", 200_000, 8_192),
    ModelFamily("gemini", 1_048_576),
)


def family_of(model: str) -> ModelFamily | None:
    """The table's entry for `model`, or None when no prefix matches."""
    name = model.lower().rsplit("/", 1)[-1]
    best: ModelFamily | None = None
    for family in FAMILIES:
        if name.startswith(family.prefix) and (best is None or len(family.prefix) > len(best.prefix)):
            best = family
    return best
