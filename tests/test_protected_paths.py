"""Protected paths: `.git/`, `.agent-tui/` and the user's rules are never changed under a rule.

`protected_change` on real directories (real git repositories, worktrees, symlinks), with the
attacks a hostile model would try, and `PermissionEngine.evaluate` turning every allow of such a
call (a remembered answer, an "always" rule, the policy) into a question.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support_workbench import git

from agent_tui.engine.permissions import PermissionAnswer, PermissionEngine, PolicyConfig
from agent_tui.engine.protected_paths import find_repository, protected_change
from agent_tui.safety import assess_shell


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    project = tmp_path / "repo"
    (project / "sub").mkdir(parents=True)
    (project / "src").mkdir()
    (project / "x").write_text("x\n")
    git(project, "init", "-q", "-b", "main")
    (project / ".agent-tui").mkdir()
    return project


def shell(cmd: str, cwd: Path, **extra: object) -> tuple[str, tuple[str, ...]] | None:
    change = protected_change("shell", {"cmd": cmd}, assess_shell(cmd).risk, cwd, **extra)  # type: ignore[arg-type]
    return (change.kind, change.paths) if change is not None else None


@pytest.mark.parametrize(
    ("cmd", "kind"),
    [
        ("echo x > .git/hooks/pre-commit", "repository"),
        ("cp x .git/config", "repository"),
        ("tee .agent-tui/permissions.json < x", "permissions"),
        ("tee < x .agent-tui/permissions.json", "permissions"),  # a word after a redirection
        ("ln -s .git/hooks h", "repository"),
        ("git config core.hooksPath h", "repository"),
        ("git -C . config --add core.hooksPath h", "repository"),
        ("sed -i s/a/b/ .git/config", "repository"),
        ("mv x .git/hooks/post-checkout", "repository"),
        ("echo > sub/../.git/hooks/x", "repository"),
        ("echo > ./.git/x", "repository"),
        ("cd sub && echo > ../.git/x", "repository"),
        ("sh -c 'cd sub; printf x >> ../.agent-tui/permissions.json'", "permissions"),
        ('bash -lc "echo x | tee -a .git/hooks/pre-push"', "repository"),
        ("python3 -c \"open('.git/hooks/pre-commit', 'w').write('x')\"", "repository"),
        ("install -m 755 x --target-directory=.git/hooks", "repository"),
        ("rm -rf .git", "repository"),
        ("mkdir -p .agent-tui && touch .agent-tui/permissions.json", "permissions"),
        ('cd "$(git rev-parse --git-dir)" && echo x > hooks/pre-commit', "repository"),
        ("echo x > $(git rev-parse --git-path hooks)/pre-commit", "repository"),
        ("dd if=x of=.git/config", "repository"),
        ("git --git-dir=.git config user.name x", "repository"),
        ("tar -C .git -xf hooks.tar", "repository"),
        ("pushd .git; echo x > config; popd", "repository"),
        ("echo x > .g\\it/hooks/pre-commit", "repository"),  # an escape the text search misses
        ('echo x > ".g""it/hooks/pre-commit"', "repository"),
        ("mv .git .git-old", "repository"),
        ("git config --global core.hooksPath ~/hooks", "repository"),
    ],
)
def test_shell_commands_that_name_a_protected_path(repo: Path, cmd: str, kind: str) -> None:
    found = shell(cmd, repo)
    assert found is not None, cmd
    assert found[0] == kind


def test_absolute_paths_and_symlinks_into_git_are_seen(repo: Path) -> None:
    (repo / "hooks").symlink_to(repo / ".git" / "hooks")  # shipped by the repository
    (repo / "g").symlink_to(".git")
    assert shell(f"echo x > {repo}/.git/hooks/pre-commit", repo) is not None
    assert shell("echo x > hooks/pre-commit", repo) == ("repository", ("hooks/pre-commit",))
    assert shell("cp x g/config", repo) == ("repository", ("g/config",))
    assert shell("cd sub && cp ../x ../g/config", repo) is not None
    assert protected_change("write_file", {"path": "hooks/pre-commit"}, "write", repo) is not None
    assert protected_change("edit_file", {"path": "sub/../g/config"}, "write", repo) is not None


def test_a_session_in_a_subdirectory_protects_the_repository_above(repo: Path) -> None:
    assert shell("echo x > ../.git/hooks/pre-commit", repo / "sub") is not None
    assert shell(f"cp ../x {repo}/.agent-tui/permissions.json", repo / "sub") is not None


def test_the_users_rules_directory_is_protected(repo: Path, tmp_path: Path) -> None:
    rules = tmp_path / "data" / "agent-tui" / "permissions"
    assert shell(f"echo x > {rules}/repo-0123.json", repo, extra_roots=[rules]) == (
        "permissions",
        (f"{rules}/repo-0123.json",),
    )
    # Written through `~` or a variable: the name still gives it away.
    assert shell("echo x >> ~/.local/share/agent-tui/permissions/r.json", repo) is not None
    assert shell('printf x > "$HOME/.local/share/agent-tui/permissions/r.json"', repo) is not None


@pytest.mark.parametrize(
    "cmd",
    [
        "cat .git/config",  # read-only: proven so by the classifier
        "git log --oneline -3",
        "echo hi > notes.txt",
        "git add . && git commit -m 'fix the thing'",
        "cat .gitignore .github/workflows/ci.yml > all.txt",
        "git clone https://example.com/repo.git ../other",
        "rm -rf build",
    ],
)
def test_ordinary_commands_are_not_protected_changes(repo: Path, cmd: str) -> None:
    assert shell(cmd, repo) is None


def test_file_tools_outside_the_protected_places_are_ordinary(repo: Path) -> None:
    assert protected_change("write_file", {"path": "src/a.py"}, "write", repo) is None
    assert protected_change("write_file", {"path": ".gitignore"}, "write", repo) is None
    assert protected_change("read_file", {"path": ".git/config"}, "read", repo) is None
    change = protected_change("write_file", {"path": ".git/hooks/pre-commit"}, "write", repo)
    assert change is not None and change.kind == "repository"
    assert "repository's machinery (.git/hooks/pre-commit)" in change.warning
    change = protected_change("edit_file", {"path": ".agent-tui/permissions.json"}, "write", repo)
    assert change is not None and "changes agent-tui's permissions" in change.warning


def test_a_worktree_protects_its_own_and_its_repositorys_git_dirs(repo: Path, tmp_path: Path) -> None:
    git(repo, "add", "x")
    git(repo, "commit", "-q", "-m", "first")
    worktree = repo / ".agent-tui" / "worktrees" / "fix-1a2b3c"
    git(repo, "worktree", "add", "-q", "-b", "agent-tui/fix", str(worktree))
    outside = tmp_path / "elsewhere"
    git(repo, "worktree", "add", "-q", "-b", "agent-tui/out", str(outside))
    found = find_repository(worktree)
    assert found is not None and found.main_root == repo.resolve() and found.root == worktree.resolve()
    # Inside the worktree's checkout files are ordinary ...
    assert protected_change("write_file", {"path": "x"}, "write", worktree) is None
    assert shell("echo y > x", worktree) is None
    # ... its `.git` file, and where it points, are not.
    assert protected_change("write_file", {"path": ".git"}, "write", worktree) is not None
    gitdir = (repo / ".git" / "worktrees" / "elsewhere").resolve()
    assert shell(f"echo x > {gitdir}/HEAD", outside) is not None
    assert shell(f"echo x > {repo}/.git/hooks/pre-commit", outside) is not None
    # The repository's own rules file, seen from the worktree.
    assert shell("echo x > ../../permissions.json", worktree) is not None


def test_every_allow_becomes_a_question_and_a_deny_stays(repo: Path, tmp_path: Path) -> None:
    engine = PermissionEngine(
        PolicyConfig(byTool={"write_file": "allow", "shell": "allow"}), rules_path=tmp_path / "rules.json"
    )
    args = {"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\n"}
    protected = engine.protected_change("write_file", args, "write", repo)
    assert protected is not None
    verdict = engine.evaluate("s1", "write_file", args, "write", protected=protected)
    assert (verdict.decision, verdict.policy) == ("ask", "protected")
    assert verdict.warning is not None and ".git/hooks/pre-commit" in verdict.warning
    engine.remember("s1", "write_file", args, "write", PermissionAnswer("allow", "session"))
    engine.remember("s1", "write_file", args, "write", PermissionAnswer("allow", "always"))
    assert engine.evaluate("s1", "write_file", args, "write").decision == "allow"  # not protected
    assert engine.evaluate("s1", "write_file", args, "write", protected=protected).decision == "ask"
    engine.remember("s1", "shell", {"cmd": "rm -rf .git"}, "destructive", PermissionAnswer("deny", "always"))
    cmd = {"cmd": "rm -rf .git"}
    verdict = engine.evaluate(
        "s1",
        "shell",
        cmd,
        "destructive",
        protected=engine.protected_change("shell", cmd, "destructive", repo),
    )
    assert verdict.decision == "deny"


def test_the_rules_file_itself_is_protected(tmp_path: Path, repo: Path) -> None:
    rules = tmp_path / "data" / "permissions" / "repo.json"
    engine = PermissionEngine(rules_path=rules)
    cmd = f"echo '{{}}' > {rules}"
    assert engine.protected_change("shell", {"cmd": cmd}, assess_shell(cmd).risk, repo) is not None


@pytest.mark.parametrize(
    "cmd", ["echo x > \ud800.txt", "echo '\x00' > a", "cat <<EOF > .git/x\nhi\nEOF", "echo $((", "((("]
)
def test_odd_lines_never_raise(repo: Path, cmd: str) -> None:
    shell(cmd, repo)  # a verdict, whatever it is, and no exception
    assert shell("cat <<EOF > .git/x\nhi\nEOF", repo) is not None


@pytest.mark.parametrize(
    ("cmd", "kind"),
    [
        ("cp post-index-change .gi[t]/hooks/", "repository"),
        ("cp permissions.json .agent-tu[i]/", "permissions"),
        ("cd .g*t && echo x > glob4", "repository"),
        ("cp x .{g,}it/hooks/", "repository"),
        ("cp x .*/hooks/pre-commit", "repository"),
        ("find . -maxdepth 1 -name '*it' -exec touch {}/f ;", "repository"),  # find matches dots
    ],
)
def test_a_glob_or_brace_that_could_name_a_protected_path_is_one(repo: Path, cmd: str, kind: str) -> None:
    found = shell(cmd, repo)
    assert found is not None and found[0] == kind


@pytest.mark.parametrize("cmd", ["rm -rf *", "cp x */", "cp x src/*.py out/", "echo {a,b}.txt", "ls -d */"])
def test_a_glob_the_shell_cannot_expand_to_a_dot_name_is_ordinary(repo: Path, cmd: str) -> None:
    assert shell(cmd, repo) is None  # the shell's `*` does not match a leading `.`


def test_a_line_with_more_to_resolve_than_is_quick_is_asked_at_once(repo: Path) -> None:
    found = shell("cd a; " * 5000 + "touch" + " x" * 5000, repo)
    assert found is not None and "too long to check" in found[1][0]
    found = shell(
        "".join(f"cd d{n}; " for n in range(300)) + "touch " + " ".join(f"f{n}" for n in range(300)), repo
    )
    assert found is not None and "too many to check" in found[1][0]
