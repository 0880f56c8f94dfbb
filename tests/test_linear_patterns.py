"""The fixed regular expressions the code applies to text from a model, a log or a repository
take time linear in the text: none of them backtracks over a long input. (Patterns a model
writes go to RE2, see tests/test_line_search.py; Python's `re` only ever runs the code's own.)

Each input below is one a backtracking pattern could take minutes on; they run in a child
process whose timeout is the guard, so a busy machine cannot fail the test.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap

from hypothesis import given, settings
from hypothesis import strategies as st

from agent_tui.safety.shell_words import BRACE

# What BRACE said before it was made linear: the same answer is required of it.
QUADRATIC_BRACE = re.compile(r"\{[^{}]*(?:,|\.\.)[^{}]*\}")


@settings(max_examples=2000, deadline=None)
@given(st.text(alphabet="{},.a$ ", max_size=24))
def test_brace_finds_what_the_plain_pattern_did(word: str) -> None:
    assert bool(BRACE.search(word)) == bool(QUADRATIC_BRACE.search(word))


def test_hostile_inputs_to_the_codes_own_patterns_end_at_once() -> None:
    program = textwrap.dedent(
        """
        from agent_tui.safety import assess_shell
        from agent_tui.safety.shell_words import BRACE
        from agent_tui.tui.screens.replay_view import _WHERE
        from agent_tui.tui.hanging import _LEAD
        from agent_tui.importers.ids import safe_part
        from agent_tui.providers.retry import _KEY_SHAPES
        from agent_tui.importers.codex_words import EXIT_CODE
        from agent_tui.safety.sed_awk import _AWK_STRING

        n = 1_000_000
        assert BRACE.search("{" + "," * n) is None
        assert BRACE.search("{" + "a," * n) is None
        assert BRACE.search("{" + "." * n + "}")
        assert assess_shell("echo {" + "," * n).risk
        assert _WHERE.match("a:" * n) is None
        assert _LEAD.match(" " * n + "!" * n + "x")
        assert safe_part("a" + "-" * n + "!")
        assert _KEY_SHAPES.search("sk-" * n)
        assert EXIT_CODE.search("Exit code " * n) is None
        assert _AWK_STRING.search('"' + "\\\\" * n) is None
        print("ok")
        """
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
