"""What a new user tripped over on the command line, each walked again through the real
`agent-tui`: a misspelled option is named, `replay` alone replays the project's sessions, a quiet
run still says why it failed, `run --prompt --bus --approve ask` waits for an attached dashboard,
and `serve` says what its agents do, terminal-safe.
"""

from __future__ import annotations

import asyncio
import signal
import subprocess
from pathlib import Path

import orjson
import pytest
from fake_model_server import FakeModelServer, Status, Stream, openai_stream
from support_bus_host import control, host_env, reader, start_agent_tui, wait_for_line
from support_nats import NatsServer, nats_server
from support_providers import FAKE_KEY, agent_tui, clean_env, project

from agent_tui.bus.protocol import host_events
from agent_tui.replay.sources import replay_all

__all__ = ["nats_server"]

MODEL = ["--provider", "openai", "--model", "gpt-4.1-mini"]
SHELL = [("call_sh1", "shell", ['{"cmd": "echo built > out.txt"}'])]


def env_for(tmp_path: Path) -> dict[str, str]:
    return clean_env(
        XDG_DATA_HOME=str(tmp_path / "data"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        OPENAI_API_KEY=FAKE_KEY,
    )


class TestAMisspelledOption:
    @pytest.mark.parametrize(
        ("args", "said"),
        [
            (["--sesions-dir", "X"], "agent-tui: error: unrecognized option --sesions-dir; did you mean --sessions-dir?"),
            (["--sesions-dir=X", "sessions"], "agent-tui: error: unrecognized option --sesions-dir; did you mean --sessions-dir?"),
            (["--cwd", ".", "--promt", "hi"], "agent-tui: error: unrecognized option --promt; did you mean --prompt?"),
            (["run", "--sesions-dir", "X", "s.json"], "agent-tui run: error: unrecognized option --sesions-dir; did you mean --sessions-dir?"),
            (["sessions", "--cdw", "X"], "agent-tui sessions: error: unrecognized option --cdw; did you mean --cwd?"),
            (["mcp", "--frob", "X", "list"], "agent-tui mcp: error: unrecognized option --frob"),
        ],
    )  # fmt: skip
    def test_the_option_is_named_not_its_value(self, tmp_path: Path, args: list[str], said: str) -> None:
        done = agent_tui(*args, cwd=tmp_path, env=env_for(tmp_path))
        assert done.returncode == 2 and done.stdout == ""
        assert done.stderr.splitlines()[-1] == said
        assert "invalid choice" not in done.stderr

    def test_an_abbreviation_and_a_value_that_looks_like_an_option_still_work(self, tmp_path: Path) -> None:
        (tmp_path / "logs").mkdir()
        done = agent_tui(
            "sessions", "--sessions", str(tmp_path / "logs"), cwd=tmp_path, env=env_for(tmp_path)
        )
        assert done.returncode == 0, done.stderr
        # the value of --prompt is never read as an option of ours
        asked = agent_tui(
            "run", "--prompt", "--sesions-dir", "--cwd", "nowhere", cwd=tmp_path, env=env_for(tmp_path)
        )
        assert "unrecognized option" not in asked.stderr


def prompt_run(tmp_path: Path, url: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return agent_tui(
        "run", "--prompt", "look around", "--cwd", str(tmp_path / "project"), *MODEL, "--base-url", url, *extra,
        env=env_for(tmp_path),
    )  # fmt: skip


class TestReplayWithoutAPath:
    def test_it_replays_the_projects_sessions_as_sessions_search_and_export_do(self, tmp_path: Path) -> None:
        project(tmp_path)
        with FakeModelServer() as server:
            server.script(Stream(openai_stream(["All good."])))
            done = prompt_run(tmp_path, server.openai_url)  # into the project's own sessions
        assert done.returncode == 0, done.stderr
        here = agent_tui("replay", "--dump", "state", cwd=tmp_path / "project", env=env_for(tmp_path))
        assert here.returncode == 0, here.stderr
        (session,) = orjson.loads(here.stdout)["sessions"]
        assert session["cwd"] == str(tmp_path / "project")
        listed = agent_tui("sessions", cwd=tmp_path / "project", env=env_for(tmp_path))
        assert session["sessionId"] in listed.stdout
        there = agent_tui(
            "replay",
            "--cwd",
            str(tmp_path / "project"),
            "--dump",
            "state",
            cwd=tmp_path,
            env=env_for(tmp_path),
        )
        assert there.returncode == 0 and there.stdout == here.stdout
        before = agent_tui(
            "--cwd",
            str(tmp_path / "project"),
            "replay",
            "--dump",
            "state",
            cwd=tmp_path,
            env=env_for(tmp_path),
        )
        assert before.returncode == 0 and before.stdout == here.stdout

    def test_a_project_without_sessions_says_so_in_one_line(self, tmp_path: Path) -> None:
        (tmp_path / "empty").mkdir()
        done = agent_tui("replay", "--dump", "state", cwd=tmp_path / "empty", env=env_for(tmp_path))
        assert done.returncode == 1 and done.stdout == ""
        (line,) = done.stderr.splitlines()
        assert line.startswith(f"agent-tui: {tmp_path / 'empty'}: no sessions yet (looked in ")

    def test_a_path_and_sessions_dir_together_are_refused(self, tmp_path: Path) -> None:
        done = agent_tui("replay", str(tmp_path), "--sessions-dir", str(tmp_path), env=env_for(tmp_path))
        assert (done.returncode, done.stderr) == (2, "agent-tui: give a PATH or --sessions-dir, not both\n")


class TestAQuietRun:
    def test_a_failed_turn_is_one_line_that_says_why(self, tmp_path: Path) -> None:
        project(tmp_path)
        refused = Status(
            401, {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}
        )
        with FakeModelServer() as server:
            server.script(refused)
            done = prompt_run(tmp_path, server.openai_url, "-q")
        assert done.returncode == 1
        why, summary = done.stdout.splitlines()
        assert why.startswith("[") and "turn ended: error/provider_failure: " in why
        assert "Incorrect API key provided" in why
        assert summary.startswith("1 session, ") and "(1 error)" in summary

    def test_a_good_turn_prints_only_the_summary(self, tmp_path: Path) -> None:
        project(tmp_path)
        with FakeModelServer() as server:
            server.script(Stream(openai_stream(["All good."])))
            done = prompt_run(tmp_path, server.openai_url, "-q")
        assert done.returncode == 0, done.stderr
        (summary,) = done.stdout.splitlines()
        assert "(1 final)" in summary


class TestRunPromptOnABus:
    def test_help_says_which_runs_ask_over_the_bus(self) -> None:
        done = agent_tui("run", "--help", env=clean_env(COLUMNS="200"))
        assert (
            "ask: an attached dashboard answers, with --bus, for any run (a scenario, --prompt or --agent)"
            in done.stdout
        )

    def test_ask_without_a_bus_says_what_works(self, tmp_path: Path) -> None:
        project(tmp_path)
        done = prompt_run(tmp_path, "http://127.0.0.1:9/v1", "--approve", "ask")
        assert done.returncode == 2
        assert done.stderr == (
            "agent-tui: --approve ask goes with --bus URL|local (an attached dashboard answers); "
            "without a bus, answer with --approve allow or --approve deny\n"
        )

    @pytest.mark.anyio
    async def test_an_attached_dashboard_answers_its_ask(
        self, nats_server: NatsServer, tmp_path: Path
    ) -> None:
        cwd = project(tmp_path)
        sessions = tmp_path / "logs"
        client, _ = await reader(nats_server.url)
        asked: asyncio.Future[tuple[str, str]] = asyncio.get_running_loop().create_future()

        async def heard(message: object) -> None:
            event = orjson.loads(message.data)  # type: ignore[attr-defined]
            if (
                event["type"] == "permission.resolved"
                and event["payload"]["decision"] == "ask"
                and not asked.done()
            ):
                asked.set_result((event["sessionId"], event["payload"]["requestId"]))

        await client.subscribe(host_events("ci-prompt"), cb=heard)
        await client.flush()
        with FakeModelServer() as server:
            server.script(Stream(openai_stream(calls=SHELL)), Stream(openai_stream(["Built it."])))
            process = start_agent_tui(
                ["run", "--prompt", "build it", "--cwd", str(cwd), *MODEL, "--base-url", server.openai_url,
                 "--sessions-dir", str(sessions), "--bus", nats_server.url, "--host", "ci-prompt", "--approve", "ask"],
                host_env(tmp_path, OPENAI_API_KEY=FAKE_KEY),
            )  # fmt: skip
            try:
                session_id, request_id = await asyncio.wait_for(asked, 60)
                reply = await control(
                    client, "ci-prompt", "answer", request_id="a1", session_id=session_id,
                    requestId=request_id, decision="allow",
                )  # fmt: skip
                assert reply.ok, reply.message
                stdout, stderr = await asyncio.to_thread(process.communicate, timeout=60)
            finally:
                if process.poll() is None:
                    process.kill()
                    process.wait()
        await client.close()
        assert process.returncode == 0, stderr
        assert (cwd / "out.txt").read_text() == "built\n"
        resolved = [e.payload for e in replay_all(sessions) if e.type == "permission.resolved"]
        assert [(p["decision"], p["actor"]) for p in resolved] == [("ask", "policy"), ("allow", "user")]
        assert resolved[1]["by"]["dashboard"] == "laptop"
        assert "publishes on the bus" in stderr and "turn ended: final" in stdout


@pytest.mark.anyio
async def test_serve_says_what_its_agents_do_terminal_safe(nats_server: NatsServer, tmp_path: Path) -> None:
    cwd = project(tmp_path)
    hostile = "build it\x1b]0;pwned\x07\x1b[2J\nsecond line"
    with FakeModelServer() as server:
        server.script(Stream(openai_stream(calls=SHELL)), Stream(openai_stream(["Built it."])))
        serve = start_agent_tui(
            ["serve", "--bus", nats_server.url, "--sessions-dir", str(tmp_path / "served"), "--cwd", str(cwd),
             "--host", "box", *MODEL, "--base-url", server.openai_url],
            host_env(tmp_path, OPENAI_API_KEY=FAKE_KEY),
        )  # fmt: skip
        client, _ = await reader(nats_server.url)
        ended: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        asked: asyncio.Future[str] = asyncio.get_running_loop().create_future()

        async def heard(message: object) -> None:
            event = orjson.loads(message.data)  # type: ignore[attr-defined]
            if (
                event["type"] == "permission.resolved"
                and event["payload"]["decision"] == "ask"
                and not asked.done()
            ):
                asked.set_result(event["payload"]["requestId"])
            if event["type"] == "turn.completed" and not ended.done():
                ended.set_result(None)

        try:
            await asyncio.to_thread(wait_for_line, serve, "host box serves")
            await client.subscribe(host_events("box"), cb=heard)
            await client.flush()
            started = await control(client, "box", "new_agent", request_id="n1", prompt=hostile, name="lead")
            assert started.ok, started.message
            session_id = started.detail["sessionId"]
            request_id = await asyncio.wait_for(asked, 60)
            answered = await control(
                client,
                "box",
                "answer",
                request_id="a1",
                session_id=session_id,
                requestId=request_id,
                decision="allow",
            )
            assert answered.ok, answered.message
            await asyncio.wait_for(ended, 60)
        finally:
            await client.close()
            serve.send_signal(signal.SIGTERM)
            stdout, _ = await asyncio.to_thread(serve.communicate, timeout=60)
    assert serve.returncode == 128 + signal.SIGTERM
    lines = stdout.splitlines()
    assert lines[0] == "[lead] started: build it␛]0;pwned␇␛[2J second line", lines
    assert lines[1] == (
        '[lead] waits for an answer: shell cmd="echo built > out.txt" (answer it in an attached dashboard)'
    ), lines
    assert lines[2].startswith("[lead] ended: final ("), lines
    assert len(lines) == 3 and "\x1b" not in stdout and "\x07" not in stdout
