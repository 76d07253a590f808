"""Parallel runs against one model server each follow their own script."""

from concurrent.futures import ThreadPoolExecutor

import pytest
from parts import needs

from skillassay.agents import get_agent
from skillassay.agents.claude_code import ClaudeCodeAgent
from skillassay.agents.codex import CodexAgent
from skillassay.testing import ModelServer, parse_scripts


@pytest.mark.slow
@needs(
    ClaudeCodeAgent().binary is not None and CodexAgent().binary is not None,
    "the pinned claude and codex CLIs (npm ci --prefix node)",
)
def test_parallel_claude_and_codex_runs(tmp_path, make_ctx, proxied):
    import subprocess

    runs = []
    for n, agent in enumerate(["claude-code", "claude-code", "codex"]):
        ws = tmp_path / f"ws{n}"
        ws.mkdir()
        subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
        if agent == "codex":
            turn = [{"patch": f"*** Begin Patch\n*** Add File: out.txt\n+run {n}\n*** End Patch\n"}]
        else:
            turn = [
                {
                    "tool_use": {
                        "name": "Write",
                        "input": {"file_path": f"{ws}/out.txt", "content": f"run {n}\n"},
                    }
                }
            ]
        script = parse_scripts({"id": f"run{n}", "turns": [turn], "final_text": f"finished {n}"})[0]
        runs.append((agent, ws, script))

    with ModelServer([s for _, _, s in runs]) as server:
        endpoints = [proxied(server, script.id) for _, _, script in runs]

        def run(n: int):
            agent, ws, _script = runs[n]
            ctx = make_ctx(
                workspace=ws,
                output_dir=tmp_path / f"out{n}",
                home=tmp_path / f"home{n}",
                env={"SKILLASSAY_MAX_RETRIES": "1"},
                model_endpoint=endpoints[n],
            )
            return get_agent(agent).run(ctx)

        with ThreadPoolExecutor(3) as pool:
            results = list(pool.map(run, range(3)))

    for n, ((_, ws, _), result) in enumerate(zip(runs, results, strict=False)):
        assert result.status == "completed", result.error
        assert (ws / "out.txt").read_text() == f"run {n}\n"
        assert result.transcript.final_message == f"finished {n}"
