"""The look at the session's repository: git reads stay `read` only when its config runs nothing.

Real repositories made with real git in tmp_path; the config is written the way an attacker (or a
copied tree) would bring it. Each hostile form is first shown to really make git run a program,
so the test cannot pass on a key git ignores.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from agent_tui.engine.tools.repository_check import repository_config_risk
from agent_tui.engine.tools.shell_tool import ShellArgs, ShellTool
from agent_tui.safety import assess_shell
from agent_tui.safety.git_hooks import common_dir_of, gitdir_of

_ENV = {
    "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
    "HOME": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
    "LC_ALL": "C",
}


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, env=_ENV, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, (args, done.stderr)
    return done.stdout


def repository(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main", ".")
    (path / "a.txt").write_text("one\n")
    git(path, "add", "a.txt")
    git(path, "commit", "-q", "-m", "first")
    (path / "a.txt").write_text("two\n")  # a change, so status and diff look at the file
    return path


def assess(cwd: Path, cmd: str = "git status") -> tuple[str, str]:
    assessment = ShellTool().assess(ShellArgs(cmd=cmd), cwd)
    return assessment.risk, assessment.reason or ""


def runs_marker(cwd: Path, marker: Path, cmd: tuple[str, ...] = ("status",)) -> bool:
    """Whether plain git (no hardening) really runs the hostile program: the threat is real."""
    subprocess.run(["git", *cmd], cwd=cwd, env=_ENV, capture_output=True, timeout=30)
    ran = marker.exists()
    marker.unlink(missing_ok=True)
    return ran


def test_a_plain_repository_keeps_git_reads_read(tmp_path: Path) -> None:
    repo = repository(tmp_path / "repo")
    git(repo, "remote", "add", "origin", "https://example.com/x.git")
    git(repo, "config", "branch.main.remote", "origin")
    assert repository_config_risk(repo) is None
    assert assess(repo) == ("read", "only reads: `git status`")
    assert assess(repo / ".." / "repo", "git log --oneline -1 && git diff --stat")[0] == "read"


def test_no_repository_at_all_is_fine(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    assert repository_config_risk(tmp_path / "plain") is None
    assert assess(tmp_path / "plain", "ls")[0] == "read"


def test_fsmonitor_in_the_repository_config_is_execute(tmp_path: Path) -> None:
    repo = repository(tmp_path / "repo")
    marker = tmp_path / "ran"
    git(repo, "config", "core.fsmonitor", f"touch {marker}; false")
    assert runs_marker(repo, marker)
    assert assess(repo) == ("execute", "the repository's config can run commands (core.fsmonitor)")
    assert assess(repo / ".", "git diff")[0] == "execute"
    (repo / "sub").mkdir()
    assert assess(repo / "sub", "git log -1")[0] == "execute"  # git walks up to the repository
    assert assess(repo, "ls")[0] == "read"  # only git lines are looked at


@pytest.mark.parametrize(
    ("key", "value", "cmd"),
    [
        ("diff.external", "touch {marker}; true", ("diff",)),
        ("alias.st", "!touch {marker}", ("st",)),
    ],
)
def test_other_keys_that_run_programs_are_execute(
    tmp_path: Path, key: str, value: str, cmd: tuple[str, ...]
) -> None:
    repo = repository(tmp_path / "repo")
    marker = tmp_path / "ran"
    git(repo, "config", key, value.format(marker=marker))
    assert runs_marker(repo, marker, cmd)
    assert assess(repo, "git diff")[0] == "execute"
    assert key in assess(repo, "git diff")[1]


@pytest.mark.parametrize(
    "key",
    ["core.pager", "pager.log", "core.sshCommand", "gpg.program", "credential.helper", "log.showSignature"],
)
def test_keys_that_run_programs_outside_these_tests_are_execute(tmp_path: Path, key: str) -> None:
    repo = repository(tmp_path / "repo")
    git(repo, "config", key, "true")
    assert assess(repo) == ("execute", f"the repository's config can run commands ({key.lower()})")


def test_a_textconv_driver_chosen_by_gitattributes_is_execute(tmp_path: Path) -> None:
    repo = repository(tmp_path / "repo")
    marker = tmp_path / "ran"
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "attributes").write_text("*.txt diff=evil\n")
    git(repo, "config", "diff.evil.textconv", f"sh -c 'touch {marker}; cat \"$0\"'")
    assert runs_marker(repo, marker, ("diff",))
    assert assess(repo, "git diff") == (
        "execute",
        "the repository's config can run commands (diff.evil.textconv)",
    )


def test_a_filter_in_config_is_execute(tmp_path: Path) -> None:
    repo = repository(tmp_path / "repo")
    marker = tmp_path / "ran"
    (repo / ".gitattributes").write_text("*.txt filter=evil\n")
    git(repo, "config", "filter.evil.clean", f"sh -c 'touch {marker}; cat'")
    os.utime(repo / "a.txt", (1, 1))  # a changed stat makes status run the clean filter
    assert runs_marker(repo, marker, ("status",))
    assert "filter.evil.clean" in assess(repo)[1]


def test_included_files_are_read_whatever_their_condition(tmp_path: Path) -> None:
    repo = repository(tmp_path / "repo")
    (tmp_path / "inc").write_text("[core]\n\tfsmonitor = touch /nonexistent/x\n")
    (tmp_path / "nested").write_text("[include]\n\tpath = inc\n")
    git(repo, "config", "include.path", "../../nested")
    assert assess(repo) == ("execute", "the repository's config can run commands (core.fsmonitor)")
    other = repository(tmp_path / "other")
    git(other, "config", "includeIf.onbranch:nope.path", str(tmp_path / "inc"))
    assert "core.fsmonitor" in assess(other)[1]


def test_config_worktree_and_linked_worktrees_are_read(tmp_path: Path) -> None:
    repo = repository(tmp_path / "repo")
    git(repo, "worktree", "add", "-q", str(tmp_path / "linked"))
    assert assess(tmp_path / "linked")[0] == "read"
    git(repo, "config", "core.fsmonitor", "touch /nonexistent/x")  # the common config
    assert assess(tmp_path / "linked")[0] == "execute"
    git(repo, "config", "--unset", "core.fsmonitor")
    git(repo, "config", "extensions.worktreeConfig", "true")
    git(tmp_path / "linked", "config", "--worktree", "core.pager", "touch /nonexistent/x")
    assert assess(tmp_path / "linked") == ("execute", "the repository's config can run commands (core.pager)")


def test_a_bare_repository_as_the_directory_is_read(tmp_path: Path) -> None:
    bare = tmp_path / "evil"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(bare, "config", "core.worktree", "..")
    git(bare, "config", "core.fsmonitor", "touch /nonexistent/x")
    assert assess(bare)[0] == "execute"


def test_a_bare_repository_whose_objects_and_refs_are_files_is_still_found(tmp_path: Path) -> None:
    bare = tmp_path / "evil"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(bare, "config", "core.fsmonitor", "touch /nonexistent/x")
    for name in ("objects", "refs"):
        subprocess.run(["rm", "-rf", str(bare / name)], check=True)
        (bare / name).write_text("")
        (bare / name).chmod(0o755)
    assert git(bare, "rev-parse", "--git-dir").strip() == "."  # git still takes it for a repository
    assert assess(bare)[0] == "execute"


@pytest.mark.parametrize("version", ["2", "3", "4"])
def test_a_submodule_of_the_index_is_read_even_without_gitmodules(tmp_path: Path, version: str) -> None:
    repo = repository(tmp_path / "repo")
    inner = repository(repo / "vendor" / "lib")
    head = git(inner, "rev-parse", "HEAD").strip()
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{head},vendor/lib")
    git(repo, "update-index", "--index-version", version)
    if version == "3":
        git(repo, "update-index", "--skip-worktree", "a.txt")  # an entry with extended flags
    marker = tmp_path / "ran"
    git(inner, "config", "core.fsmonitor", f"touch {marker}; false")
    assert runs_marker(repo, marker, ("status",))  # git status looks into the submodule
    assert assess(repo) == ("execute", "a submodule's config can run commands (core.fsmonitor)")


def test_submodules_under_modules_and_gitmodules_are_read(tmp_path: Path) -> None:
    repo = repository(tmp_path / "repo")
    modules = repo / ".git" / "modules" / "lib"
    git(tmp_path, "init", "-q", "--bare", str(modules))
    assert assess(repo)[0] == "read"
    git(modules, "config", "diff.external", "touch /nonexistent/x")
    assert "diff.external" in assess(repo)[1]
    git(modules, "config", "--unset", "diff.external")
    _hook(modules / "hooks", "post-index-change", tmp_path / "ran")
    assert assess(repo) == ("execute", "a submodule has a hook git may run on a read (post-index-change)")


def _hook(directory: Path, name: str, marker: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    hook = directory / name
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o755)


@pytest.mark.parametrize("cmd", ["diff", "status"])
def test_a_hook_that_a_read_runs_is_execute(tmp_path: Path, cmd: str) -> None:
    repo = repository(tmp_path / "repo")
    marker = tmp_path / "ran"
    (repo / "same.txt").write_text("unchanged\n")
    git(repo, "add", "same.txt")
    git(repo, "commit", "-q", "-m", "same")
    _hook(repo / ".git" / "hooks", "post-index-change", marker)
    os.utime(repo / "same.txt", (1, 1))  # a stale stat: git refreshes the index, runs the hook
    assert runs_marker(repo, marker, (cmd,))
    assert assess(repo, f"git {cmd}") == (
        "execute",
        "the repository has a hook git may run on a read (post-index-change)",
    )


def test_hooks_that_only_writes_run_keep_reads_read(tmp_path: Path) -> None:
    repo = repository(tmp_path / "repo")
    for name in ("pre-commit", "commit-msg", "post-checkout", "pre-push"):
        _hook(repo / ".git" / "hooks", name, tmp_path / "ran")
    (repo / ".git" / "hooks" / "post-index-change").write_text("not executable: git ignores it\n")
    assert assess(repo)[0] == "read"


def test_hooks_under_core_hooks_path_are_looked_at(tmp_path: Path) -> None:
    repo = repository(tmp_path / "repo")
    git(repo, "config", "core.hooksPath", ".husky")
    _hook(repo / ".husky", "pre-commit", tmp_path / "ran")
    assert assess(repo)[0] == "read"
    _hook(repo / ".husky", "reference-transaction", tmp_path / "ran")
    assert "(reference-transaction)" in assess(repo)[1]


def test_a_key_not_known_to_be_harmless_is_execute(tmp_path: Path) -> None:
    repo = repository(tmp_path / "repo")
    git(repo, "config", "frobnicate.mode", "on")
    assert assess(repo) == (
        "execute",
        "the repository's config sets `frobnicate.mode`, which is not known to be harmless",
    )


def test_a_config_git_cannot_parse_is_execute(tmp_path: Path) -> None:
    repo = repository(tmp_path / "repo")
    with (repo / ".git" / "config").open("a") as config:
        config.write("[core\n\tfsmonitor = touch x\n")
    risk, reason = assess(repo)
    assert (risk, "the repository's config cannot be read" in reason) == ("execute", True)


def test_quoting_and_case_in_the_config_do_not_hide_a_key(tmp_path: Path) -> None:
    repo = repository(tmp_path / "repo")
    marker = tmp_path / "ran"
    with (repo / ".git" / "config").open("a") as config:
        config.write(f'[CoRe]\n\tFsMonitor = "touch {marker}"\\\n"; false"\n')
    assert runs_marker(repo, marker)
    assert assess(repo)[1] == "the repository's config can run commands (core.fsmonitor)"


def test_the_classifier_alone_still_judges_by_text() -> None:
    assert assess_shell("git status").risk == "read"
    assert (
        assess_shell("git status", lambda: "the repository's config can run commands (x)").risk == "execute"
    )
    assert assess_shell("ls", lambda: "never asked").risk == "read"
    assert assess_shell("git status; rm x", lambda: "x").risk == "destructive"


@pytest.mark.parametrize("said", ["gitdir: ../store/.git\r\n", "gitdir: ../store/.git\n\n", "gitdir: {abs}"])
def test_a_dot_git_file_is_read_as_git_reads_it(tmp_path: Path, said: str) -> None:
    store = repository(tmp_path / "store")
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / ".git").write_text(said.format(abs=store / ".git"))
    asked = git(checkout, "rev-parse", "--absolute-git-dir").strip()
    found = gitdir_of(checkout / ".git")
    assert found is not None and found.resolve() == Path(asked).resolve() == (store / ".git").resolve()


@pytest.mark.parametrize(
    "said", ["gitdir:../store/.git\n", "# a note\ngitdir: ../store/.git\n", "gitdir: \n"]
)
def test_a_dot_git_file_git_refuses_points_nowhere(tmp_path: Path, said: str) -> None:
    repository(tmp_path / "store")
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / ".git").write_text(said)
    refused = subprocess.run(["git", "rev-parse", "--git-dir"], cwd=checkout, env=_ENV, capture_output=True)
    assert refused.returncode != 0
    assert gitdir_of(checkout / ".git") is None


def test_a_dot_git_fifo_is_not_waited_on(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / ".git")
    assert gitdir_of(tmp_path / ".git") is None
    assert gitdir_of(tmp_path / "absent") is None


def test_a_linked_worktrees_common_dir_is_the_one_git_uses(tmp_path: Path) -> None:
    store = repository(tmp_path / "store")
    git(store, "worktree", "add", "-q", "-b", "side", str(tmp_path / "side"))
    own = gitdir_of(tmp_path / "side" / ".git")
    assert own is not None and common_dir_of(store / ".git") is None  # the main one is its own
    common = common_dir_of(own)
    asked = git(tmp_path / "side", "rev-parse", "--path-format=absolute", "--git-common-dir").strip()
    assert common is not None and common.resolve() == Path(asked).resolve() == (store / ".git").resolve()
