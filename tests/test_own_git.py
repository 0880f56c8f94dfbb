"""agent-tui's own git runs no program the repository names (`runtime.own_git`).

A hostile repository names a marker-writing program in every place git could run one from: every
hook (in `.git/hooks` and in a `core.hooksPath` of its own), filters, textconv, diff and merge
drivers named by `.gitattributes`, signing programs with `commit.gpgSign`, fsmonitor, pager,
editor, askpass, credential helper, ssh command, alternate refs command, and the same again in a
file of `include.path`, one of `includeIf "gitdir:"` and the worktree config. Then every git
action of agent-tui runs on it, through the workbench as a user drives it: turn snapshots (a
text-only turn too), worktree add, review, commit, merges (with a merge driver at work, and a
conflicting one), discard, rewind. No marker ever appears. What the user's own global config
names (a filter driver like git-lfs's, the user's signing program) still runs.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import anyio
import pytest
from support_workbench import agent_script, scripted_models

from agent_tui.engine.questions import Questions, fixed_answer
from agent_tui.engine.scenario import AgentScript, ScriptedToolCall, Step
from agent_tui.engine.scripted import ScriptedProvider
from agent_tui.runtime import worktrees
from agent_tui.runtime.finishing import FinishRefused
from agent_tui.runtime.own_git import git_bytes, own_git_environment, program_overrides
from agent_tui.runtime.turn_records import snapshot_tree
from agent_tui.runtime.workbench import AgentSpec, Workbench
from agent_tui.runtime.worktrees import WorktreeError, create_worktree, uncommitted_changes

pytestmark = pytest.mark.anyio

HOOKS = (
    "applypatch-msg",
    "pre-applypatch",
    "post-applypatch",
    "pre-commit",
    "pre-merge-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "pre-rebase",
    "post-checkout",
    "post-merge",
    "pre-push",
    "pre-receive",
    "update",
    "proc-receive",
    "post-receive",
    "post-update",
    "reference-transaction",
    "push-to-checkout",
    "pre-auto-gc",
    "post-rewrite",
    "sendemail-validate",
    "fsmonitor-watchman",
    "post-index-change",
)
"""Every hook githooks(5) names (the p4 ones are git-p4's, which agent-tui never runs)."""


def program_keys(driver: str, mark: str) -> dict[str, str]:
    """Every config key that names a program, each naming the marker program with its own tag."""
    keys = {
        f"filter.{driver}.clean": f"{mark}/clean-{driver}",
        f"filter.{driver}.smudge": f"{mark}/smudge-{driver}",
        f"filter.{driver}.required": "true",
        f"diff.{driver}.textconv": f"{mark}/textconv-{driver}",
        f"diff.{driver}.command": f"{mark}/diff-command-{driver}",
        f"merge.{driver}.driver": f"{mark}/merge-driver-{driver} %A",
    }
    return keys


HOSTILE_CORE = {
    "core.fsmonitor": "{mark}/fsmonitor",
    "core.pager": "{mark}/pager",
    "pager.diff": "{mark}/pager-diff",
    "pager.status": "{mark}/pager-status",
    "core.editor": "{mark}/editor",
    "sequence.editor": "{mark}/sequence-editor",
    "core.askPass": "{mark}/askpass",
    "core.sshCommand": "{mark}/ssh-command",
    "core.gitProxy": "{mark}/git-proxy",
    "core.alternateRefsCommand": "{mark}/alternate-refs",
    "credential.helper": "!{mark}/credential",
    "diff.external": "{mark}/diff-external",
    "gpg.program": "{mark}/gpg",
    "gpg.openpgp.program": "{mark}/gpg-openpgp",
    "gpg.x509.program": "{mark}/gpgsm",
    "gpg.ssh.program": "{mark}/ssh-keygen",
    "gpg.ssh.defaultKeyCommand": "{mark}/ssh-default-key",
    "commit.gpgSign": "true",
    "uploadpack.packObjectsHook": "{mark}/pack-objects-hook",
    "filter.evil.process": "{mark}/process-evil",
    "submodule.recurse": "true",
    "hook.linter.command": "{mark}/config-hook",  # git 2.54's hooks from config
    "hook.linter.event": "pre-commit",
    "gc.recentObjectsHook": "{mark}/recent-objects-hook",
}
"""Set in `.git/config` (besides the evil driver and the hooks path)."""


def write_program(path: Path, body: str) -> Path:
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


def run(directory: Path, *args: str) -> str:
    """The test's own git (never through agent-tui), with every hostile name switched off."""
    neutral = ["-c", "core.hooksPath=/dev/null", "-c", "commit.gpgSign=false", "-c", "core.fsmonitor=false"]
    for driver in ("evil", "incl", "cond", "wt", "lfs"):
        for key in program_keys(driver, "x"):
            value = (
                "git merge-file %A %O %B"
                if key.endswith(".driver")
                else "false"
                if key.endswith("required")
                else ""
            )
            neutral += ["-c", f"{key}={value}"]
    neutral += ["-c", "filter.evil.process="]
    done = subprocess.run(
        ["git", "-C", str(directory), *neutral, *args],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


@pytest.fixture
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home of the test's own: its `~/.gitconfig` is the user's global config, and it names a
    signing program of the user's (which writes a signature and says it ran)."""
    home = tmp_path / "home"
    home.mkdir()
    signer = write_program(
        home / "user-sign",
        f"echo sign >> {home / 'user-ran'}\ncat > /dev/null\n"
        'echo "[GNUPG:] SIG_CREATED D 1 8 00 0 0" >&2\n'
        'printf -- "-----BEGIN PGP SIGNATURE-----\\n\\nabc\\n-----END PGP SIGNATURE-----\\n"',
    )
    (home / ".gitconfig").write_text(
        f"[user]\n\tname = Tester\n\temail = tester@example.com\n\tsigningKey = TESTKEY\n"
        f"[gpg]\n\tprogram = {signer}\n"
    )
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for role in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{role}_NAME", "Tester")
        monkeypatch.setenv(f"GIT_{role}_EMAIL", "tester@example.com")
    return home


def plant(tmp_path: Path, tag: str) -> str:
    """A program `<tmp>/bin/TAG` that writes TAG into the marker file (and passes stdin on)."""
    folder = tmp_path / "bin"
    folder.mkdir(exist_ok=True)
    return str(write_program(folder / tag, f"echo {tag} >> {tmp_path / 'marks'}\ncat"))


def planted(tmp_path: Path, value: str) -> str:
    """`value`, after planting the program it names (its first word, `!` or not)."""
    program = value.split()[0].lstrip("!")
    if program.startswith(str(tmp_path / "bin")):
        plant(tmp_path, Path(program).name)
    return value


def hostile_repository(tmp_path: Path) -> tuple[Path, Path]:
    """A repository that names the marker program everywhere; returns it and the marker file."""
    project = tmp_path / "shop"
    project.mkdir()
    marks = tmp_path / "marks"
    mark = tmp_path / "bin"
    (project / "app.py").write_text("print('app')\n")
    (project / "notes.txt").write_text("one\ntwo\nthree\nfour\nfive\n")
    (project / "readme.md").write_text("# shop\n")
    (project / "settings.cfg").write_text("a = 1\n")
    (project / ".gitattributes").write_text(
        "* filter=evil diff=evil merge=evil\n"
        "*.txt filter=incl diff=incl merge=incl\n"
        "*.cfg filter=cond diff=cond merge=cond\n"
        "*.md filter=wt diff=wt merge=wt\n"
    )
    subprocess.run(["git", "init", "-q", "-b", "main", str(project)], check=True)
    run(project, "add", "-A")
    run(project, "commit", "-q", "-m", "first")
    git_dir = project / ".git"
    hooks = tmp_path / "repo-hooks"
    hooks.mkdir()
    for name in HOOKS:
        for folder in (git_dir / "hooks", hooks):
            write_program(folder / name, f"echo hook-{name}-{folder.name} >> {marks}")
    included = tmp_path / "included.cfg"
    conditional = tmp_path / "conditional.cfg"
    lines = ["[core]", "\trepositoryformatversion = 1", f"\thooksPath = {hooks}"]
    lines += ["[extensions]", "\tworktreeConfig = true"]
    lines += ["[include]", f"\tpath = {included}"]
    lines += [f'[includeIf "gitdir:{project}/"]', f"\tpath = {conditional}"]
    settings = {key: value.format(mark=mark) for key, value in HOSTILE_CORE.items()}
    settings |= program_keys("evil", str(mark))
    with (git_dir / "config").open("a") as config:
        config.write("\n".join(lines) + "\n")
    for key, value in settings.items():
        run(project, "config", "--add", key, planted(tmp_path, value))
    for file, driver in ((included, "incl"), (conditional, "cond"), (git_dir / "config.worktree", "wt")):
        text = ""
        for key, value in program_keys(driver, str(mark)).items():
            section, name = key.rsplit(".", 1)
            head, sub = section.split(".", 1)
            text += f'[{head} "{sub}"]\n\t{name} = {planted(tmp_path, value)}\n'
        for tag in ("fsmonitor", "pager", "credential"):
            plant(tmp_path, f"{tag}-{driver}")
        text += f"[core]\n\tfsmonitor = {mark}/fsmonitor-{driver}\n\tpager = {mark}/pager-{driver}\n"
        text += f"[credential]\n\thelper = !{mark}/credential-{driver}\n"
        file.write_text(text)
    listed = run(project, "config", "--list", "--show-scope")
    assert "local\tfilter.incl.clean=" in listed and "local\tfilter.cond.clean=" in listed
    assert "worktree\tfilter.wt.clean=" in listed
    assert not marks.exists()
    return project, marks


def writer(line: str) -> AgentScript:
    """An agent that writes a file with its tool and changes a line of notes.txt in the shell."""
    writes = [
        ScriptedToolCall(
            tool="write_file", args={"path": "greet.py", "content": "def greet():\n    return 'hi'\n"}
        ),
        ScriptedToolCall(tool="shell", args={"cmd": f"sed -i 's/^two$/{line}/' notes.txt"}),
    ]
    return agent_script(Step(text=["Writing."], toolCalls=writes), Step(text=["Done."]))


def workbench_for(tmp_path: Path, project: Path, provider: ScriptedProvider) -> Workbench:
    return Workbench.for_project(
        project=project,
        sessions_dir=tmp_path / "sessions",
        models=scripted_models(provider),
        questions=Questions(fixed_answer("allow")),
        data_dir=tmp_path / "data",
    )


async def idle(workbench: Workbench, session_id: str) -> None:
    with anyio.fail_after(20):
        while workbench.is_running(session_id):
            await anyio.sleep(0.01)


def no_marks(marks: Path, step: str) -> None:
    assert not marks.exists(), f"after {step}: " + marks.read_text().replace("\n", " ")


async def test_no_program_the_repository_names_runs_for_any_git_action_of_agent_tui(
    tmp_path: Path, user_home: Path
) -> None:
    project, marks = hostile_repository(tmp_path)
    provider = ScriptedProvider(
        agents={
            "writer": writer("TWO"),
            "rival": writer("zwei"),
            "talker": agent_script(Step(text=["Just words."])),
            "shell": agent_script(
                Step(
                    text=["Changing."],
                    toolCalls=[ScriptedToolCall(tool="shell", args={"cmd": "echo new > app.py"})],
                ),
                Step(text=["Done."]),
            ),
        }
    )
    workbench = workbench_for(tmp_path, project, provider)
    async with workbench.engine:
        # A text-only turn in the user's own checkout: two snapshots.
        talk = await workbench.start_agent(AgentSpec("Say something", project, name="talker"))
        await idle(workbench, talk)
        assert len(workbench.facts(talk).turns) == 1
        no_marks(marks, "a text-only turn")
        # worktree add, a turn of tools in it, the review.
        first = await workbench.start_agent(AgentSpec("Write", project, name="writer", own_worktree=True))
        await idle(workbench, first)
        review = await workbench.review(first)
        assert [f.path for f in review.files] == ["greet.py", "notes.txt"]
        assert "+TWO" in review.files[1].diff
        no_marks(marks, "worktree add, a turn and the review")
        # commit (signed, by the user's own program), then a merge with a content merge at work.
        done = await workbench.commit(first, "Agent work")
        assert "BEGIN PGP SIGNATURE" in run(project, "cat-file", "commit", done.commit)
        assert (user_home / "user-ran").read_text() == "sign\n"
        no_marks(marks, "the commit")
        second = await workbench.start_agent(AgentSpec("Write", project, name="rival", own_worktree=True))
        await idle(workbench, second)
        no_marks(marks, "a second worktree")
        (project / "notes.txt").write_text("one\ntwo\nthree\nfour\n5\n")  # main moves, elsewhere
        run(project, "commit", "-q", "-am", "main moves")
        merged = await workbench.merge(first)
        assert not merged.fast_forward and merged.checkout == project
        assert (project / "notes.txt").read_text() == "one\nTWO\nthree\nfour\n5\n"
        no_marks(marks, "the merge")
        # The rival changed the same line: a conflicting merge is refused, nothing half done.
        await workbench.commit(second, "Rival work")
        with pytest.raises(FinishRefused, match=r"conflicts in notes\.txt"):
            await workbench.merge(second)
        assert not (project / ".git" / "MERGE_HEAD").exists()
        no_marks(marks, "a conflicting merge")
        await workbench.discard(second)
        no_marks(marks, "discard")
        # A shell change in the user's checkout, rewound from the turn's snapshots.
        changer = await workbench.start_agent(AgentSpec("Change app.py", project, name="shell"))
        await idle(workbench, changer)
        assert (project / "app.py").read_text() == "new\n"
        turn = workbench.facts(changer).turns[0]
        plan = await workbench.rewind_plan(changer, turn.turn_id)
        assert [(f.shown, f.action) for f in plan.files] == [("app.py", "restored")]
        await workbench.rewind(changer, turn.turn_id)
        assert (project / "app.py").read_text() == "print('app')\n"
        no_marks(marks, "a rewind")
        await workbench.close()
    workbench.close_store()
    no_marks(marks, "closing")


def test_the_users_own_filter_driver_still_runs_and_the_repositorys_redefinition_does_not(
    tmp_path: Path, user_home: Path
) -> None:
    project, marks = hostile_repository(tmp_path)
    user_ran = user_home / "filter-ran"
    lfs = write_program(user_home / "lfs-like", f'echo "$1" >> {user_ran}\ncat')
    with (user_home / ".gitconfig").open("a") as config:
        config.write(f'[filter "lfs"]\n\tclean = {lfs} clean\n\tsmudge = {lfs} smudge\n\trequired = true\n')
    with (project / ".gitattributes").open("a") as attributes:
        attributes.write("*.dat filter=lfs\n")
    run(project, "config", "filter.lfs.clean", plant(tmp_path, "clean-lfs"))  # the repo's own
    run(project, "config", "filter.lfs.smudge", plant(tmp_path, "smudge-lfs"))
    (project / "big.dat").write_text("large\n")
    snapshot_tree(project)  # the turn snapshot: `git add -A` cleans big.dat
    assert set(user_ran.read_text().split()) == {"clean"}
    no_marks(marks, "a snapshot")
    run(project, "add", "-A")
    run(project, "commit", "-q", "-m", "big file")
    worktree = create_worktree(project, "lfs")
    assert (worktree.path / "big.dat").read_text() == "large\n"
    assert "smudge" in user_ran.read_text().split()
    no_marks(marks, "worktree add")


def test_what_git_could_start_from_the_repositorys_config_starts_nothing_through_own_git(
    tmp_path: Path, user_home: Path
) -> None:
    """Commands agent-tui does not run today, run through its own git anyway, each reaching for a
    program the repository names: a diff with textconv and external diff allowed, a log with
    patches, a credential fill (helper, askpass), a commit with no message (editor), signing with
    ssh, status (fsmonitor), a checkout (hooks), gc, and the transports (upload-pack, ssh, ext)."""
    project, marks = hostile_repository(tmp_path)
    other = tmp_path / "other"
    subprocess.run(["git", "init", "-q", "-b", "main", str(other)], check=True)
    run(other, "commit", "-q", "--allow-empty", "-m", "one")
    run(project, "config", "remote.origin.url", str(other))
    run(project, "config", "remote.origin.uploadpack", plant(tmp_path, "upload-pack"))
    run(project, "config", "remote.origin.vcs", "evil")
    run(project, "config", "remote.ext.url", f"ext::{plant(tmp_path, 'ext-transport')}")
    run(project, "config", "protocol.allow", "always")
    run(project, "config", "protocol.ext.allow", "always")
    write_program(tmp_path / "git-remote-evil", f"echo remote-helper >> {marks}")
    with (project / ".gitattributes").open("a") as attributes:
        attributes.write("*.sh !diff\n")  # no diff driver: `diff.external` is what git would use
    (project / "plain.sh").write_text("echo one\n")
    run(project, "add", "-A")
    run(project, "commit", "-q", "-m", "a file without a diff driver")
    (project / "app.py").write_text("print('changed')\n")
    (project / "notes.txt").write_text("changed\n")
    (project / "plain.sh").write_text("echo two\n")
    attempts = [
        ("diff", "HEAD"),
        ("diff", "--ext-diff", "HEAD"),
        ("log", "-p", "-1"),
        ("show", "--ext-diff", "HEAD"),
        ("status",),
        ("commit", "--allow-empty"),
        ("-c", "gpg.format=ssh", "commit", "--allow-empty", "-m", "signed with ssh"),
        ("diff", "HEAD", "--", "plain.sh"),
        ("-c", "gpg.format=x509", "commit", "--allow-empty", "-m", "signed with x509"),
        ("checkout", "-q", "-b", "elsewhere"),
        ("gc", "--auto"),
        ("ls-remote", "origin"),
        ("fetch", "origin"),
        ("ls-remote", "ext"),
        ("ls-remote", "ssh://git@example.invalid/x.git"),
        ("ls-remote", "https://example.invalid/x.git"),
    ]
    for args in attempts:
        git_bytes(project, *args, check=False, env={"PATH": f"{tmp_path}:{os.environ['PATH']}"})
        no_marks(marks, " ".join(args))
    # Without a signing key of the user's, ssh signing asks `gpg.ssh.defaultKeyCommand` for one.
    keyless = {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_COMMITTER_NAME": "T", "GIT_AUTHOR_NAME": "T"}
    git_bytes(project, "-c", "gpg.format=ssh", "commit", "--allow-empty", "-m", "x", check=False, env=keyless)
    no_marks(marks, "ssh signing without a key")
    filled = git_bytes(
        project, "credential", "fill", input=b"protocol=https\nhost=example.com\n\n", check=False
    )
    assert filled.returncode != 0
    no_marks(marks, "credential fill")


def test_a_submodules_own_config_runs_nothing_when_agent_tui_asks_for_status(
    tmp_path: Path, user_home: Path
) -> None:
    """git's `status` runs `git status` inside each submodule, under the submodule's own config,
    which names a filter here (and the superproject's `submodule.sm.ignore` asks to look)."""
    project, marks = hostile_repository(tmp_path)
    library = tmp_path / "library"
    subprocess.run(["git", "init", "-q", "-b", "main", str(library)], check=True)
    (library / ".gitattributes").write_text("* filter=sub\n")
    (library / "lib.txt").write_text("lib\n")
    run(library, "add", "-A")
    run(library, "commit", "-q", "-m", "lib")
    run(project, "-c", "protocol.file.allow=always", "submodule", "--quiet", "add", str(library), "sm")
    run(project, "commit", "-q", "-m", "a submodule")
    run(project, "config", "submodule.sm.ignore", "none")
    run(project / "sm", "config", "filter.sub.clean", plant(tmp_path, "clean-in-submodule"))
    (project / "sm" / "lib.txt").write_text("changed in the submodule\n")
    assert uncommitted_changes(project) == 0  # the submodule's own work is its own
    git_bytes(project, "status", "--porcelain", "--untracked-files=all")
    no_marks(marks, "status in a repository with a submodule")
    run(project / "sm", "-c", "filter.sub.clean=", "commit", "-q", "-am", "new commit in the submodule")
    assert uncommitted_changes(project) == 1  # a new commit of the submodule is still seen
    no_marks(marks, "status after a commit in the submodule")


@pytest.mark.parametrize(
    ("where", "make"),
    [
        (".agent-tui", "link-outside"),
        (".agent-tui", "link-inside"),
        (".agent-tui", "dangling"),
        (".agent-tui", "file"),
        (".agent-tui/worktrees", "link-outside"),
        (".agent-tui/worktrees", "link-inside"),
        (".agent-tui/worktrees", "dangling"),
        (".agent-tui/worktrees", "file"),
        (".agent-tui/worktrees/.gitignore", "link-outside"),
        (".agent-tui/worktrees/.gitignore", "dangling"),
    ],
)
def test_a_worktree_is_made_only_in_a_real_agent_tui_folder(
    tmp_path: Path, user_home: Path, where: str, make: str
) -> None:
    project = tmp_path / "shop"
    project.mkdir()
    (project / "app.py").write_text("print('app')\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (project / "inside").mkdir()
    spot = project / where
    spot.parent.mkdir(parents=True, exist_ok=True)
    if make == "link-outside":
        spot.symlink_to(outside)
    elif make == "link-inside":
        spot.symlink_to(project / "inside")
    elif make == "dangling":
        spot.symlink_to(tmp_path / "nowhere")
    else:
        spot.write_text("a file\n")
    subprocess.run(["git", "init", "-q", "-b", "main", str(project)], check=True)
    run(project, "add", "-A")
    run(project, "commit", "-q", "-m", "first")
    said = {"file": "not a folder"}.get(make, "symbolic link")
    if where.endswith(".gitignore"):
        said = "not a plain file"
    with pytest.raises(WorktreeError, match=f"{spot}.* {said}"):
        create_worktree(project, "agent")
    assert list(outside.iterdir()) == [] and list((project / "inside").iterdir()) == []
    assert not (tmp_path / "nowhere").exists()
    assert run(project, "worktree", "list", "--porcelain").count("worktree ") == 1
    assert run(project, "branch", "--list", "agent-tui/*") == ""


def test_a_worktrees_folder_swapped_for_a_symlink_while_the_worktree_is_made_is_undone(
    tmp_path: Path, user_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "shop"
    project.mkdir()
    (project / "app.py").write_text("print('app')\n")
    subprocess.run(["git", "init", "-q", "-b", "main", str(project)], check=True)
    run(project, "add", "-A")
    run(project, "commit", "-q", "-m", "first")
    outside = tmp_path / "outside"
    outside.mkdir()
    checked = worktrees._own_folder

    def checked_then_swapped(root: Path) -> Path:
        folder = checked(root)
        folder.rename(tmp_path / "moved-away")
        folder.symlink_to(outside)  # what a command running meanwhile could do
        return folder

    monkeypatch.setattr(worktrees, "_own_folder", checked_then_swapped)
    with pytest.raises(WorktreeError, match="became a symbolic link while the worktree was made"):
        create_worktree(project, "agent")
    assert list(outside.iterdir()) == []
    assert run(project, "worktree", "list", "--porcelain").count("worktree ") == 1
    assert run(project, "branch", "--list", "agent-tui/*") == ""


def test_only_program_keys_set_by_the_repository_are_overridden_and_the_users_value_comes_back() -> None:
    listing = b"\0".join(
        [
            b"global",
            b"filter.lfs.clean\ngit-lfs clean -- %f",
            b"local",
            b"filter.lfs.clean\nevil",
            b"local",
            b"filter.Mine.smudge\nevil",
            b"worktree",
            b"credential.https://example.com.helper\nevil",
            b"global",
            b"credential.helper\nstore",
            b"local",
            b"credential.helper\nevil",
            b"local",
            b"user.name\nSomeone",
            b"global",
            b"gpg.program\nmy-gpg",
            b"local",
            b"gpg.ssh.program\nevil",
            b"local",
            b"merge.ours.driver\nevil",
            b"global",
            b"hook.mine.command\nmy-linter",
            b"local",
            b"hook.linter.command\nevil",
            b"",
        ]
    )
    assert program_overrides(listing) == [
        ("credential.helper", ""),
        ("credential.helper", "store"),
        ("credential.https://example.com.helper", ""),
        ("filter.Mine.smudge", ""),
        ("filter.lfs.clean", ""),
        ("filter.lfs.clean", "git-lfs clean -- %f"),
        ("gpg.ssh.program", "ssh-keygen"),
        ("hook.linter.command", ""),
        ("merge.ours.driver", "git merge-file --marker-size=%L %A %O %B"),
        ("hook.linter.enabled", "false"),
        ("hook.mine.enabled", "false"),
    ]


@pytest.mark.parametrize(
    "condition",
    ["onbranch:agent-tui/**", "gitdir:**/worktrees/**", "gitdir/i:**/WORKTREES/**"],
)
def test_a_conditional_include_that_holds_only_in_the_new_worktree_runs_nothing(
    tmp_path: Path, user_home: Path, condition: str
) -> None:
    """The config is listed where agent-tui asks (the repository, on its branch), but `worktree
    add` checks out in the new worktree, on the agent's branch, where git reads the config again:
    an include whose condition holds only there (found attacking) must not name a filter."""
    project = tmp_path / "shop"
    project.mkdir()
    (project / "app.py").write_text("print('app')\n")
    (project / ".gitattributes").write_text("* filter=late\n")
    subprocess.run(["git", "init", "-q", "-b", "main", str(project)], check=True)
    run(project, "add", "-A")
    run(project, "commit", "-q", "-m", "first")
    nested = tmp_path / "nested.cfg"
    nested.write_text(f'[filter "late"]\n\tclean = {plant(tmp_path, "clean-nested")}\n')
    (project / ".git" / "late.cfg").write_text(
        f'[filter "late"]\n\tsmudge = {plant(tmp_path, "smudge-late")}\n'
        f'[includeIf "onbranch:**"]\n\tpath = {nested}\n'
    )
    with (project / ".git" / "config").open("a") as config:
        config.write(f'[includeIf "{condition}"]\n\tpath = late.cfg\n')
    assert "filter.late" not in run(project, "config", "--list")
    (project / "src" / "deeper").mkdir(parents=True)  # git lists `.git/config` from the top, not from here
    assert "filter.late.smudge" in own_git_environment(project / "src" / "deeper").values()
    worktree = create_worktree(project, "agent")
    assert (worktree.path / "app.py").read_text() == "print('app')\n"
    (worktree.path / "app.py").write_text("print('changed')\n")
    snapshot_tree(worktree.path)
    no_marks(tmp_path / "marks", f"worktree add with includeIf {condition}")


@pytest.mark.parametrize("where", ["absolute", "relative"])
def test_a_working_tree_the_repository_moves_elsewhere_is_refused(
    tmp_path: Path, user_home: Path, where: str
) -> None:
    """`core.worktree` in the repository's config made the user's home the working tree: the turn
    snapshot copied `~/.ssh/id_rsa` into the repository's objects, for anyone with the repository
    (the agent's sandboxed shell too) to read (found attacking). A submodule, whose config git
    itself gives a `core.worktree`, still works."""
    key = user_home / ".ssh" / "id_rsa"
    key.parent.mkdir(exist_ok=True)
    key.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nsecret\n")
    project = tmp_path / "shop"
    project.mkdir()
    (project / "app.py").write_text("print('app')\n")
    subprocess.run(["git", "init", "-q", "-b", "main", str(project)], check=True)
    run(project, "add", "-A")
    run(project, "commit", "-q", "-m", "first")
    library = tmp_path / "library"
    subprocess.run(["git", "init", "-q", "-b", "main", str(library)], check=True)
    run(library, "commit", "-q", "--allow-empty", "-m", "one")
    run(project, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library), "lib")
    run(project, "commit", "-q", "-m", "a submodule")
    assert "worktree = " in (project / ".git" / "modules" / "lib" / "config").read_text()
    snapshot_tree(project)
    git_bytes(project / "lib", "status")  # the submodule's own core.worktree points back: kept
    moved = str(user_home) if where == "absolute" else os.path.relpath(user_home, project / ".git")
    run(project, "config", "core.worktree", moved)
    with pytest.raises(WorktreeError, match=f"sets core.worktree to {user_home}, a folder whose .git is not"):
        snapshot_tree(project)
    secret = run(project, "hash-object", "--no-filters", "--", str(key))
    objects = run(project, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)")
    assert secret not in objects.split()
