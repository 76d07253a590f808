"""A small fake results tree, written through the real models, with hostile content in the untrusted files."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from synthetic_runs import make_job

from skillassay.definitions.agent_eval import Criterion, ForbiddenBehaviour, QualityGate
from skillassay.definitions.models import EvalDefinition
from skillassay.transcripts import Message, ToolCall, Transcript

JOB = "20261129-224512-ab12"
OTHER = "20261130-010000-cd34"
XSS_TRANSCRIPT = "<script>alert(1)</script>"
XSS_DIFF = "</pre><script>alert(2)</script><img src=x onerror=\"document.body.dataset.pwned='1'\">"


@dataclass
class Tree:
    root: Path
    job_id: str
    runs: list


def hostile_transcript() -> Transcript:
    return Transcript(
        agent="claude-code",
        messages=[
            Message(role="user", text=f"Integrate Seam {XSS_TRANSCRIPT}"),
            Message(role="assistant", text=XSS_TRANSCRIPT),
        ],
        tool_calls=[
            ToolCall(
                id="1", name="Read", kind="read", input={"file_path": "src/app.ts"}, result=XSS_TRANSCRIPT
            ),
            ToolCall(
                id="2",
                name="Bash",
                kind="shell",
                command=f"echo '{XSS_TRANSCRIPT}'",
                input={"command": f"echo '{XSS_TRANSCRIPT}'"},
                exit_code=0,
                result=XSS_TRANSCRIPT,
            ),
            ToolCall(id="3", name=f"Weird{XSS_TRANSCRIPT}", kind="other", is_error=True, result="boom"),
        ],
        final_message=f"done {XSS_TRANSCRIPT}",
    )


HOSTILE_DIFF = (
    "diff --git a/src/app.ts b/src/app.ts\n--- a/src/app.ts\n+++ b/src/app.ts\n@@ -1,2 +1,3 @@\n"
    f" const a = 1;\n+// {XSS_DIFF}\n+const html = '{XSS_TRANSCRIPT}';\n"
)


@pytest.fixture
def results_tree(tmp_path) -> Tree:
    root = tmp_path / "results"
    _, runs = make_job(root, job_id=JOB, evals=("express-ts", "flask-py"), runs=3, baseline=True)
    # the first run of express-ts carries hostile content everywhere a user's agent could put it
    first = next(r for r in runs if r.eval_id == "express-ts" and r.run_index == 1 and r.variant == "skill")
    d = root / first.run_dir
    (d / "transcript.json").write_text(hostile_transcript().model_dump_json(), encoding="utf-8")
    (d / "diff.patch").write_text(HOSTILE_DIFF, encoding="utf-8")
    (d / "app.stderr.log").write_text("x\n" * 5000 + f"last line {XSS_DIFF}\n", encoding="utf-8")
    return Tree(root, JOB, runs)


@pytest.fixture
def definitions(tmp_path) -> list[EvalDefinition]:
    src = tmp_path / "suite" / "agent-evals"
    src.mkdir(parents=True)
    out = []
    for eid, title in (("express-ts", "Express reservations"), ("never-run", "An eval nobody ran yet")):
        f = src / f"{eid}.toml"
        f.write_text(f'id = "{eid}"\n# <script>alert(3)</script>\n', encoding="utf-8")
        out.append(
            EvalDefinition(
                id=eid,
                title=title,
                format="native",
                source=f,
                suite_dir=tmp_path / "suite",
                fixture_dir=tmp_path / "suite",
                app_dir=tmp_path / "suite" / "app",
                prompt="Add Seam <b>now</b>",
                stack="typescript-express",
                language="typescript",
                pass_threshold=0.75,
                expected_behaviour=["Creates an access code on reservation create"],
                forbidden_behaviour=[
                    ForbiddenBehaviour(
                        id="edits_tests",
                        description="Edits the tests to make them pass",
                        detector="test_tampering",
                    )
                ],
                required_concepts=["idempotency keys"],
                quality_requirements=[
                    QualityGate(
                        id="unit_tests",
                        command="npm test",
                        kind="test",
                        description="Errors from Seam are logged, not swallowed",
                    )
                ],
                criteria=[
                    Criterion(
                        id="creates_code", weight=40, description="code created", grader="hidden_tests"
                    ),
                    Criterion(id="scope_discipline", weight=20, description="small diff", grader="diff"),
                ],
                notes="Seam sandbox devices only.",
            )
        )
    return out
