"""The native agent-eval kind: the process graders decide criteria, forbidden behaviour and the verdict."""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING, cast

from skillassay.definitions.models import ControlExpectation, EvalDefinition
from skillassay.errors import DefinitionError
from skillassay.graders.judge_config import JudgeConfig
from skillassay.kinds.base import ControlOutcome, EvalKind, GradeOutcome, GradeRequest, Layers, failure
from skillassay.scoring.verdict import percent_text
from skillassay.transcripts import Transcript
from skillassay.workspace.changes import compare_trees

if TYPE_CHECKING:
    from skillassay.isolation.record import Sealing


class AgentKind(EvalKind):
    name = "agent"
    format = "native"

    def suite_files(self, definition: EvalDefinition) -> list[Path]:
        return [Path(definition.source).parent]  # the definition file and its hidden tests beside it

    def reload(self, definition: EvalDefinition, suite: Path, suite_here: Path) -> EvalDefinition:
        from skillassay.definitions.native import load_native

        return load_native(suite_here / Path(definition.source).resolve().relative_to(suite), suite_here)

    def hashed_inputs(self, definition: EvalDefinition) -> list[Path]:
        # hidden tests beside the definition (<id>/hidden_tests)
        return [*super().hashed_inputs(definition), Path(definition.source).parent / definition.id]

    def golden_expectation(self, definition: EvalDefinition, layers: Layers) -> ControlExpectation:
        """The golden's own expectation (``test_golden.expected.json`` beside it), else a pass."""
        own = Path(definition.golden_dir or "").parent / "test_golden.expected.json"
        if definition.golden_dir is not None and own.is_file():
            return ControlExpectation.model_validate_json(own.read_text(encoding="utf-8"))
        return super().golden_expectation(definition, layers)

    def golden_transcript(self, definition: EvalDefinition) -> Transcript | None:
        from skillassay.graders.agent_controls import load_transcript

        return load_transcript(Path(definition.golden_dir)) if definition.golden_dir is not None else None

    def own_controls(
        self, definition: EvalDefinition, judge_config: JudgeConfig | None
    ) -> list[ControlOutcome] | None:
        """Each control gets its expected verdict (``graders.agent_controls``)."""
        from skillassay.graders.agent_controls import expected_label, run_controls

        return [
            ControlOutcome(
                eval_id=definition.id,
                control=o.name,
                matches=o.matches,
                expected=expected_label(o.expected) + f" ({o.expected.description})",
                actual=f"{o.actual} {percent_text(o.score)}",
                mismatches=list(o.mismatches),
            )
            for o in run_controls(definition, judge_config=judge_config)
        ]

    def mutant_checks(self, definition: EvalDefinition) -> bool:
        return True

    def grade(self, request: GradeRequest) -> GradeOutcome:
        from skillassay.graders import evaluate

        d = request.definition
        change = (
            request.change if request.change is not None else compare_trees(d.app_dir, request.modified_dir)
        )
        out = GradeOutcome()
        t = time.monotonic()
        work = request.run_dir / "grading"
        work.mkdir(parents=True, exist_ok=True)
        try:
            res = evaluate(
                d,
                d.app_dir,
                request.modified_dir,
                request.transcript,
                work,
                judge_config=request.judge_config,
                change=change,
                policy=request.policy,
                sealing=cast("Sealing | None", request.sealing),
            )
            out.process = res.model_dump(mode="json")
            out.criteria = list(res.criteria)
            out.forbidden_observed = [f if isinstance(f, str) else f.id for f in res.forbidden_observed]
            out.verdict = res.verdict
            out.failures.extend(res.failures)
        except DefinitionError:
            raise
        except Exception as exc:  # noqa: BLE001 - a grader bug must not lose the run, nor score it
            out.failures.append(failure("process graders", exc))
            out.criteria = []
            out.verdict = None
        finally:
            # the folders are copies of the workspace (and the fixture) the commands ran in: the run keeps its
            # workspace once, and the reports the commands wrote (files) stay
            for sub in work.iterdir():
                if sub.is_dir() and not sub.is_symlink():
                    shutil.rmtree(sub, ignore_errors=True)
        out.timings["process"] = round(time.monotonic() - t, 3)
        return out
