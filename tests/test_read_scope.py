"""Where a `read` may look: the classifier given the session's directory and the sandbox.

A real home holds every credential store of the table and a real session directory holds links
out of it; each row is a command, whether it runs in the sandbox, its risk and a piece of the
reason. Without the sandbox a read outside the directory (by name, `~`, glob, `..`, a link, after
`cd`) is asked unless the place is harmless; a credential store is never `read`, in any mode.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from agent_tui.engine.tools.base import ToolContext, ToolResult
from agent_tui.engine.tools.router import ToolRouter
from agent_tui.engine.tools.shell_setup import ShellSetup, use_shell_setup
from agent_tui.engine.tools.shell_tool import ShellTool
from agent_tui.safety import ReadScope, assess_shell
from agent_tui.safety.credential_stores import CREDENTIAL_STORES, CredentialStore, store_paths
from agent_tui.safety.read_scope import HARMLESS_PLACES, MAX_MATCHES


@pytest.fixture
def place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """`home` with every store planted, `work` the session's directory, `elsewhere` a file
    outside both; `work/out` links to `elsewhere`, `work/keys` to `~/.ssh`, `work/shared` to
    `/usr/share`, and `worklink` to `work`."""
    for name, variable in [
        ("home", "HOME"),
        ("xdg-config", "XDG_CONFIG_HOME"),
        ("xdg-data", "XDG_DATA_HOME"),
        ("xdg-cache", "XDG_CACHE_HOME"),
        ("run", "XDG_RUNTIME_DIR"),
        ("tmp", "TMPDIR"),
    ]:
        (tmp_path / name).mkdir()
        monkeypatch.setenv(variable, str(tmp_path / name))
    for store in CREDENTIAL_STORES:  # the stores a variable moved: kept apart from the home
        if store.base == "variable":
            monkeypatch.setenv(store.path.rstrip("/"), str(tmp_path / "moved" / store.path.rstrip("/")))
    for found in store_paths():
        path = Path(found.path)
        if found.store.directory:
            path.mkdir(parents=True, exist_ok=True)
            (path / "secret").write_text("s\n")
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("s\n")
    work = tmp_path / "work"
    (work / "src").mkdir(parents=True)
    (work / "a.txt").write_text("a\n")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "notes.txt").write_text("n\n")
    (work / "out").symlink_to(tmp_path / "elsewhere")
    (work / "keys").symlink_to(tmp_path / "home" / ".ssh")
    (work / "shared").symlink_to("/usr/share")
    (tmp_path / "worklink").symlink_to(work)
    (work / "~").mkdir()  # a directory a repository may ship, named like the home
    (work / "~" / "id").symlink_to(tmp_path / "home" / ".ssh" / "secret")
    monkeypatch.chdir(work)
    yield tmp_path


def judged(cmd: str, cwd: Path, *, sandboxed: bool) -> tuple[str, str]:
    assessment = assess_shell(cmd, None, ReadScope.of(cwd, sandboxed=sandboxed))
    return assessment.risk, assessment.reason or ""


OUTSIDE = "outside the session's directory"
STORE = "a credential store"

# (command, sandboxed, risk, a piece of the reason); `{t}` is the test's root, `work` the cwd.
ROWS = [
    # inside the directory: read, in both modes
    ("cat a.txt", False, "read", "only reads"),
    ("cat ./src/../a.txt", False, "read", "only reads"),
    ("cd src && ls", False, "read", "only reads"),
    ("cat *.txt", False, "read", "only reads"),
    ("cat {t}/work/a.txt", False, "read", "only reads"),  # an absolute path inside is fine
    ("grep -rn '/api/v1' src", False, "read", "only reads"),  # a pattern is not a path
    ("sed -n '/x/p' a.txt", False, "read", "only reads"),
    ("echo {t}/elsewhere/notes.txt", False, "read", "only reads"),  # echo opens nothing
    ("cat {t}/worklink/a.txt", False, "read", "only reads"),  # the directory through a link
    ("ls shared", False, "read", "only reads"),  # a link to a harmless place
    # outside, without the sandbox: asked
    ("cat {t}/elsewhere/notes.txt", False, "execute", OUTSIDE),
    ("cat ../elsewhere/notes.txt", False, "execute", OUTSIDE),
    ("ls ..", False, "execute", OUTSIDE),
    ("cat ../elsewhere/*", False, "execute", OUTSIDE),
    ("cat ../*/notes.txt", False, "execute", OUTSIDE),
    ("cat out/notes.txt", False, "execute", OUTSIDE),  # a link out of the directory
    ('cat ./$"keys"/secret', False, "execute", "expands to a value"),  # bash drops the `$` of `$"…"`
    ('cat ./$"keys"/secret', True, "execute", "expands to a value"),
    ("ls out", False, "execute", OUTSIDE),
    ("cd .. && cat elsewhere/notes.txt", False, "execute", "`cd` goes to .."),
    ("cd {t}/elsewhere && cat notes.txt", False, "execute", "`cd` goes to"),
    ("cd out && ls", False, "execute", "`cd` goes to out"),
    ("cd && ls", False, "execute", "`cd` goes to ~"),
    ("cd ~ && ls", False, "execute", "`cd` goes to ~"),
    ("cd - && cat notes.txt", False, "execute", "not known here"),
    ("pushd src >/dev/null && popd && cat a.txt", False, "execute", "not known here"),
    ("cat ~+/../elsewhere/notes.txt", False, "execute", OUTSIDE),
    ("cat ~-/notes.txt", False, "execute", "previous directory"),
    ("cat < ../elsewhere/notes.txt", False, "execute", OUTSIDE),
    ("grep --file=../elsewhere/notes.txt a.txt", False, "execute", OUTSIDE),
    ("grep -f../elsewhere/notes.txt a.txt", False, "execute", OUTSIDE),
    ("cat {{a.txt,../elsewhere/notes.txt}}", False, "execute", OUTSIDE),
    ("ls ~", False, "execute", OUTSIDE),
    ("cat /etc/passwd", False, "execute", OUTSIDE),
    ("cat /etc/hosts", False, "execute", OUTSIDE),
    ("cat /proc/self/environ", False, "execute", OUTSIDE),
    ("cat /proc/1/cmdline", False, "execute", OUTSIDE),
    ("ls /", False, "execute", OUTSIDE),
    ("cat /proc/self/cwd/../elsewhere/notes.txt", False, "execute", "resolves it per process"),
    ("cat /proc/self/root{t}/elsewhere/notes.txt", False, "execute", "resolves it per process"),
    ("cat /dev/fd/3", False, "execute", "resolves it per process"),
    ("cat /proc/self/root{t}/home/.ssh/secret", True, "execute", STORE),
    ("cat a=~/.ssh/secret", True, "execute", STORE),  # bash expands `~` after `=` in a word
    ("cat /usr/lib/../..{t}/home/.ssh/secret", True, "execute", STORE),
    ("find / -name x", False, "execute", OUTSIDE),
    ("git diff --no-index ../elsewhere/notes.txt a.txt", False, "execute", OUTSIDE),
    ("cat a.txt | grep -c a - ../elsewhere/notes.txt", False, "execute", OUTSIDE),
    # harmless system places stay read
    ("cat /etc/os-release", False, "read", "only reads"),
    ("ls /usr/share", False, "read", "only reads"),
    ("cat /proc/cpuinfo", False, "read", "only reads"),
    ("head -c 8 /dev/urandom | od", False, "read", "only reads"),
    ("cd /usr/share && ls", False, "read", "only reads"),
    # in the sandbox, outside is fine (the stores are hidden there, nothing can be written)
    ("cat {t}/elsewhere/notes.txt", True, "read", "only reads"),
    ("cd .. && cat elsewhere/notes.txt", True, "read", "only reads"),
    ("cat /etc/hosts", True, "read", "only reads"),
    # a credential store: never read, in either mode, however it is named
    ("cat ~/.ssh/secret", True, "execute", STORE),
    ("cat ~/.ssh/secret", False, "execute", STORE),
    ("cat keys/secret", True, "execute", STORE),  # through a link in the directory
    ("ls keys", True, "execute", STORE),
    ("cat ~/.ss?/*", True, "execute", STORE),
    ("cd .. && cat home/.ssh/secret", True, "execute", STORE),
    ("cd ~ && cat .netrc", True, "execute", STORE),
    ("cat ../home/.codex/auth.json", True, "execute", STORE),
    ("cat ~/.codex/*", True, "execute", STORE),
    ("echo ~/.ssh/secret", True, "execute", STORE),
    ("cat < {t}/home/.netrc", True, "execute", STORE),
    ("cat < ~/.netrc", True, "execute", "a name not known here"),  # the parser does not expand it
    ("cat ~/.bash_history", True, "execute", STORE),
    ("cat '~/id'", True, "execute", STORE),  # quoted: the directory `~` of the project
    ("cd '~' && cat id", True, "execute", STORE),
    ("cat '~'/id", False, "execute", STORE),
]


@pytest.mark.parametrize(("cmd", "sandboxed", "risk", "reason"), ROWS, ids=[f"{r[0]}-{r[1]}" for r in ROWS])
def test_where_a_read_may_look(place: Path, cmd: str, sandboxed: bool, risk: str, reason: str) -> None:
    got = judged(cmd.format(t=place), place / "work", sandboxed=sandboxed)
    assert got[0] == risk and reason in got[1], got


def _spellings(store: CredentialStore) -> list[str]:
    paths = [found.path for found in store_paths() if found.store == store]
    if store.base == "home":
        paths.append("~/" + store.path)
    return paths


@pytest.mark.parametrize("store", CREDENTIAL_STORES, ids=lambda store: store.shown)
@pytest.mark.parametrize("sandboxed", [False, True], ids=["bare", "sandboxed"])
def test_no_credential_store_is_read(place: Path, store: CredentialStore, sandboxed: bool) -> None:
    for path in _spellings(store):
        for cmd in (f"cat {path}", f"ls {path}", f"wc -c {path}/*" if store.directory else f"head {path}"):
            got = judged(cmd, place / "work", sandboxed=sandboxed)
            assert got[0] == "execute" and STORE in got[1], (cmd, got)


@pytest.mark.parametrize("harmless", [place for place in HARMLESS_PLACES if os.path.exists(place)])
def test_the_harmless_places_are_read_without_the_sandbox(place: Path, harmless: str) -> None:
    cmd = f"ls {harmless}" if harmless.endswith("/") else f"wc -c {harmless}"
    assert judged(cmd, place / "work", sandboxed=False)[0] == "read"


def test_a_session_in_home_reads_nothing_unasked_without_the_sandbox(place: Path) -> None:
    home = place / "home"
    (home / "notes.txt").write_text("n\n")
    for cmd in ("ls -A", "grep -r token .", "cat notes.txt", "rg token"):
        risk, reason = judged(cmd, home, sandboxed=False)
        assert risk == "execute" and "holds credential stores" in reason, (cmd, reason)
    # in the sandbox the stores are hidden: what is not a store is read
    assert judged("cat notes.txt", home, sandboxed=True)[0] == "read"
    assert judged("cat .ssh/secret", home, sandboxed=True)[0] == "execute"


def test_a_session_inside_a_store_reads_it(place: Path) -> None:
    """The user chose to work in the store (a `pass` repository): its own files are the session's."""
    store = place / "home" / ".password-store"
    assert judged("cat secret", store, sandboxed=False)[0] == "read"
    assert judged("cat ~/.ssh/secret", store, sandboxed=False)[0] == "execute"


def test_a_glob_matching_too_many_files_is_not_judged(place: Path) -> None:
    many = place / "work" / "many"
    many.mkdir()
    for number in range(MAX_MATCHES + 1):
        (many / f"f{number}").write_text("")
    risk, reason = judged("cat many/*", place / "work", sandboxed=True)
    assert risk == "execute" and "too many" in reason


def test_the_shell_tool_judges_with_its_directory_and_its_sandbox(place: Path) -> None:
    tool = ShellTool(ShellSetup(sandbox=False))
    outside = tool.assess(tool.Args(cmd="cat ../elsewhere/notes.txt"), place / "work")
    assert outside.risk == "execute" and OUTSIDE in (outside.reason or "")
    store = tool.assess(tool.Args(cmd="cat ~/.codex/auth.json"), place / "work")
    assert store.risk == "execute" and STORE in (store.reason or "")
    assert tool.assess(tool.Args(cmd="cat a.txt"), place / "work").risk == "read"
    # in the sandbox (this machine has one: the sandbox tests need it), outside is read
    sandboxed = ShellTool(ShellSetup(sandbox=True))
    assert sandboxed.assess(tool.Args(cmd="cat ../elsewhere/notes.txt"), place / "work").risk == "read"


# -- the file tools --------------------------------------------------------------------------


def _file_tool(name: str, args: dict[str, str], cwd: Path) -> ToolResult:
    router = ToolRouter()
    tool, parsed = router.parse(name, args)
    ctx = ToolContext(
        cwd=cwd, session_id="s", turn_id="t", tool_call_id="c", on_output=_ignore, output_budget=200_000
    )

    async def run() -> ToolResult:
        return await router.run(tool, parsed, ctx)

    return anyio.run(run)


async def _ignore(stream: str, text: str) -> None:
    return None


@pytest.mark.parametrize("store", CREDENTIAL_STORES, ids=lambda store: store.shown)
def test_the_file_tools_do_not_read_a_store_inside_the_sessions_directory(
    place: Path, store: CredentialStore
) -> None:
    """A session in `$HOME`: `read_file`, `list_dir` and `grep` refuse a store or skip it."""
    home = place / "home"
    (home / "notes.txt").write_text("s is not secret here\n")
    for found in store_paths():
        if found.store != store or not Path(found.path).is_relative_to(home):
            continue
        relative = os.path.relpath(found.path, home)
        named = f"{relative}/secret" if store.directory else relative
        for name, args in [("read_file", {"path": named}), ("grep", {"pattern": "s", "path": named})] + (
            [("list_dir", {"path": relative})] if store.directory else []
        ):
            result = _file_tool(name, args, home)
            assert not result.ok and result.error_code == "path_unsafe", (name, args, result)
            assert "credential store" in result.text
    searched = _file_tool("grep", {"pattern": "s", "path": "."}, home)
    assert searched.ok and searched.text.splitlines() == ["notes.txt:1:s is not secret here"], searched.text


def test_the_docs_show_the_table_and_the_harmless_places_exactly() -> None:
    text = (Path(__file__).parent.parent / "docs" / "shell-risk.md").read_text()
    rows = [
        line for line in text.splitlines() if line.startswith("| `") and line.endswith(("| yes |", "| no |"))
    ]
    expected = [
        f"| `{store.shown}` | {store.holds} | {'yes' if store.login else 'no'} |"
        for store in CREDENTIAL_STORES
    ]
    assert rows == expected
    section = text.split("## Where a read may look", 1)[1].split("### Credential stores", 1)[0]
    listed = {
        word
        for word in section.split("The harmless places", 1)[1].split("`")[1::2]
        if word.startswith("/") and "*" not in word
    }
    assert set(HARMLESS_PLACES) <= listed


def test_a_secret_file_the_config_names_is_a_store_for_the_classifier_and_the_file_tools(place: Path) -> None:
    creds = place / "work" / "conf" / "bus.creds"
    creds.parent.mkdir()
    creds.write_text("s\n")
    scope = ReadScope.of(place / "work", sandboxed=True, secret_files=[str(creds)])
    assessment = assess_shell("cat conf/bus.creds", None, scope)
    assert assessment.risk == "execute" and STORE in (assessment.reason or "")
    with use_shell_setup(ShellSetup(secret_files=frozenset({str(creds)}))):
        refused = _file_tool("read_file", {"path": "conf/bus.creds"}, place / "work")
        searched = _file_tool("grep", {"pattern": "s", "path": "conf"}, place / "work")
    assert refused.error_code == "path_unsafe" and "credential store" in refused.text
    assert searched.ok and "bus.creds" not in searched.text


def test_a_store_the_environment_moved_is_a_store_wherever_it_is(
    place: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`GOOGLE_APPLICATION_CREDENTIALS`, `KUBECONFIG` (a list) and `GNUPGHOME` name stores
    outside every place of the table (found attacking: the key file was read in the sandbox)."""
    keys = place / "elsewhere" / "keys"
    keys.mkdir()
    for name in ("sa.json", "one.yaml", "two.yaml"):
        (keys / name).write_text("s\n")
    (keys / "gnupg").mkdir()
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(keys / "sa.json"))
    monkeypatch.setenv("KUBECONFIG", f"{keys / 'one.yaml'}:relative.yaml:{keys / 'two.yaml'}")
    monkeypatch.setenv("GNUPGHOME", str(keys / "gnupg"))
    for cmd in ("cat ../elsewhere/keys/sa.json", f"head {keys}/two.yaml", f"ls {keys}/gnupg"):
        got = judged(cmd, place / "work", sandboxed=True)
        assert got[0] == "execute" and STORE in got[1], (cmd, got)
    assert (
        judged(f"cat {keys}/../keys/../../elsewhere/notes.txt", place / "work", sandboxed=True)[0] == "read"
    )
    paths = {found.path for found in store_paths() if found.store.base == "variable"}
    assert {str(keys / "one.yaml"), str(keys / "two.yaml")} <= paths
    assert not any(path.endswith("relative.yaml") for path in paths)


@pytest.mark.parametrize(
    "cmd",
    [
        "grep -R secret .",
        "grep -nR secret docs",
        "grep --dereference-recursive secret",
        "egrep -R secret",
        "rg -L secret",
        "rg --follow secret docs",
        "find -L . -type f",
        "find docs -follow -type f",
        "ls -LR docs",
        "ls -R -L",
        "tree -l",
    ],
)
def test_a_walk_that_follows_links_is_judged_by_the_links_in_it(place: Path, cmd: str) -> None:
    """A repository can ship a symlink (`docs/deep/keys -> ../../../home/.ssh`): `grep -R` follows
    it wherever it lies in the tree, so without the sandbox such a walk was `read` and read the
    keys (found attacking). A walk that does not follow links, or a tree without one, is read."""
    work = place / "project"
    (work / "docs" / "deep").mkdir(parents=True)
    (work / "src").mkdir()
    (work / "src" / "a.py").write_text("secret = 1\n")
    (work / "docs" / "deep" / "keys").symlink_to(
        os.path.relpath(place / "home" / ".ssh", work / "docs" / "deep")
    )
    got = judged(cmd, work, sandboxed=False)
    assert got[0] == "execute" and STORE in got[1] and "docs/deep/keys" in got[1], got
    assert judged(cmd, work, sandboxed=True)[0] == "read"  # the sandbox hides the store
    (work / "docs" / "deep" / "keys").unlink()
    (work / "docs" / "deep" / "inside").symlink_to(work / "src")
    assert judged(cmd, work, sandboxed=False)[0] == "read"  # a link that stays inside
    (work / "docs" / "deep" / "inside").unlink()
    (work / "docs" / "deep" / "keys").symlink_to(place / "home" / ".ssh")
    for plain in ("grep -r secret .", "rg secret", "find . -type f", "ls -R docs", "grep -R secret src"):
        assert judged(plain, work, sandboxed=False)[0] == "read", plain
