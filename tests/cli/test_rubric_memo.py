"""``skillassay rubric`` with its memo (seam/cli/fast.py, workspace/output_memo.py): a grade of files graded
before prints what the grade itself prints, byte for byte, on every shipped golden; any change to what the
grader reads, however disguised, is graded again; errors are never kept; a forged entry never reaches the
output."""

from __future__ import annotations

import json
import marshal
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from skillassay.seam.cli import fast
from skillassay.workspace.output_memo import DIGEST_BYTES, blake2b

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "evals" / "fixtures"
GOLDENS = sorted(p.parent.name for p in FIXTURES.glob("*/eval_config.json"))


@pytest.fixture
def memo_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The memo on (the suite turns it off: tests/conftest.py), in a cache folder of this test's own."""
    monkeypatch.setenv("SKILLASSAY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("SKILLASSAY_RUBRIC_MEMO", raising=False)
    return tmp_path / "cache" / "rubric-memo"


@pytest.fixture
def grades(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The fixture dirs the grader itself was asked about: a hit leaves this list alone."""
    calls: list[str] = []
    real = fast._grade

    def counting(*args: object) -> tuple[int, str]:
        calls.append(str(args[2]))
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(fast, "_grade", counting)
    return calls


def _grade(
    capsys: pytest.CaptureFixture[str], fixture: Path, modified: Path | None = None, plain: bool = True
) -> tuple[int, str, str]:
    code = fast.grade_rubric(fixture / "app", modified or fixture / "test_golden", fixture, None, plain)
    out, err = capsys.readouterr()
    return code, out, err


def test_every_golden_graded_again_prints_what_its_grade_prints(
    memo_on: Path, grades: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
):
    for name in GOLDENS:
        fixture = FIXTURES / name
        for plain in (True, False):
            monkeypatch.setenv("SKILLASSAY_RUBRIC_MEMO", "off")
            fresh = _grade(capsys, fixture, plain=plain)
            monkeypatch.delenv("SKILLASSAY_RUBRIC_MEMO")
            first, again = _grade(capsys, fixture, plain=plain), _grade(capsys, fixture, plain=plain)
            assert fresh == first == again, name
            assert fresh[0] == 0 and json.loads(fresh[1])["total"] == 100.0, name
    assert len(grades) == 2 * 2 * len(GOLDENS)  # the memo off, its first grade; never the second
    assert len(list(memo_on.glob("*.memo"))) == 2 * len(GOLDENS)


def test_a_disguised_edit_of_a_graded_workspace_is_graded_again(
    memo_on: Path, grades: list[str], capsys: pytest.CaptureFixture[str], tmp_path: Path
):
    # the golden graded (100, kept); then its Seam call is made to miss, padded to the same size, the time
    # set back: the memo must not hand back the golden's 100
    fixture = FIXTURES / "fastapi-py"
    workspace = tmp_path / "workspace"
    shutil.copytree(fixture / "test_golden", workspace)
    code, out, _ = _grade(capsys, fixture, workspace)
    assert code == 0 and json.loads(out)["total"] == 100.0
    edited = next(p for p in sorted(workspace.rglob("*.py")) if "push_data" in p.read_text())
    info, text = edited.stat(), edited.read_text()
    edited.write_text(text.replace("push_data", "push_d_ta"))
    os.utime(edited, ns=(info.st_atime_ns, info.st_mtime_ns))
    assert edited.stat().st_size == info.st_size
    code, out, _ = _grade(capsys, fixture, workspace)
    assert code == 0 and json.loads(out)["total"] < 100.0
    assert len(grades) == 2


def test_the_answer_key_and_the_rubric_are_inputs(
    memo_on: Path, grades: list[str], capsys: pytest.CaptureFixture[str], tmp_path: Path
):
    suite = tmp_path / "evals"
    fixture = suite / "fixtures" / "fastapi-py"
    shutil.copytree(FIXTURES / "fastapi-py", fixture)
    shutil.copyfile(REPO / "evals" / "rubric.json", suite / "rubric.json")
    baseline = _grade(capsys, fixture)
    rubric = json.loads((suite / "rubric.json").read_text())
    rubric["categories"][0]["weight"], rubric["categories"][1]["weight"] = (
        rubric["categories"][1]["weight"],
        rubric["categories"][0]["weight"],
    )
    (suite / "rubric.json").write_text(json.dumps(rubric))
    reweighted = _grade(capsys, fixture)
    key = json.loads((fixture / "answer_key.json").read_text())
    (fixture / "answer_key.json").write_text(json.dumps({**key, "unexpected": True}))
    broken = _grade(capsys, fixture)
    assert len(grades) == 3
    assert baseline[1] != reweighted[1]
    assert broken[0] == 2 and "answer_key.json" in broken[2]


def test_an_error_is_never_kept(
    memo_on: Path, grades: list[str], capsys: pytest.CaptureFixture[str], tmp_path: Path
):
    fixture = tmp_path / "fixture"
    shutil.copytree(FIXTURES / "flask-py", fixture)
    (fixture / "answer_key.json").write_text("{not json")
    first, again = _grade(capsys, fixture), _grade(capsys, fixture)
    assert first == again and first[0] == 2 and "answer_key.json" in first[2]
    assert len(grades) == 2
    assert list(memo_on.glob("*.memo")) == []


def test_the_memo_turned_off_keeps_nothing(
    memo_on: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("SKILLASSAY_RUBRIC_MEMO", "off")
    assert _grade(capsys, FIXTURES / "flask-py")[0] == 0
    assert not memo_on.exists()


def test_a_forged_entry_in_the_cache_never_reaches_the_output(memo_on: Path, tmp_path: Path):
    # someone who can write the cache folder (and read its entries) but not read its secret rewrites the
    # kept grade of a losing workspace to the golden's 100, under the very key the grade computes; the whole
    # process (the console script) must print the real grade
    fixture = FIXTURES / "express-ts"
    losing = tmp_path / "losing"
    shutil.copytree(fixture / "app", losing)  # the pristine app: nothing integrated
    script = Path(sys.executable).parent / "skillassay"

    def run(modified: Path) -> bytes:
        argv = ["rubric", "--pristine", str(fixture / "app"), "--modified", str(modified)]
        proc = subprocess.run(
            [str(script), *argv, "--fixture-dir", str(fixture), "--plain"], capture_output=True, timeout=120
        )
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    honest = run(losing)
    assert json.loads(honest)["total"] < 100.0
    (entry,) = memo_on.glob("*.memo")
    golden = run(fixture / "test_golden")
    assert json.loads(golden)["total"] == 100.0
    fmt, code, _ = marshal.loads(entry.read_bytes()[DIGEST_BYTES:])
    forged = marshal.dumps((fmt, code, golden))
    for mac in (
        bytes(DIGEST_BYTES),
        os.urandom(DIGEST_BYTES),
        blake2b(forged, digest_size=DIGEST_BYTES).digest(),
    ):
        entry.write_bytes(mac + forged)
        assert run(losing) == honest


def test_a_grade_from_a_working_folder_since_removed_is_graded_not_memoized(
    memo_on: Path,
    grades: list[str],
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
):
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    assert _grade(capsys, FIXTURES / "flask-py")[0] == 0
    assert len(grades) == 1 and not list(memo_on.glob("*.memo"))


def test_a_hit_loads_neither_the_grader_nor_typing_pathlib_or_re(memo_on: Path):
    # what makes a grade of files graded before cost less than the plan's checker: the whole process loads
    # only the memo (benchmarks/cli_startup.py measures it)
    fixture = FIXTURES / "flask-py"
    argv = ["rubric", "--pristine", str(fixture / "app"), "--modified", str(fixture / "test_golden")]
    argv += ["--fixture-dir", str(fixture), "--plain"]
    code = (
        "import io, json, sys, contextlib\n"
        "from skillassay.cli import main\n"
        "main._exit_now = lambda code: None\n"
        "out = io.StringIO()\n"
        f"sys.argv = ['skillassay', *{argv!r}]\n"
        "with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):\n"
        "    main.main()\n"
        "print(json.dumps({'total': json.loads(out.getvalue())['total'], 'modules': sorted(sys.modules)}))\n"
    )

    def run() -> dict:
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout.splitlines()[-1])

    first, again = run(), run()
    assert first["total"] == again["total"] == 100.0
    assert "skillassay.seam.rubric" in first["modules"]  # the first grade graded
    # json (and with it re), contextlib and io are this probe's own; the hit imports none of these
    heavy = {"skillassay.seam.rubric", "skillassay.errors", "typing", "pathlib", "dataclasses"}
    assert heavy.isdisjoint(again["modules"])
