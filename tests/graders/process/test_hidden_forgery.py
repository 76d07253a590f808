"""Hidden tests judged from outside the code under test (docs/agent-evals.md, "Black-box hidden tests").

The attacks of ``hidden_attacks`` planted in a copy of the ``cancels_any_status`` control (its hidden tests
fail: 0 with ``partial = false``); before black-box judging and the isolated white-box run, atexit_junit,
conftest_makereport, ini_addopts and pyproject_addopts made it 9/9 (100%). The real pytest, the real sealed
children, the app's real environment (built once, from the install cache).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hidden_attacks import plant
from process_helpers import make_definition, write_tree

from skillassay.definitions.agent_eval import Criterion
from skillassay.definitions.native import load_native
from skillassay.graders import blackbox, hidden_tests
from skillassay.graders.base import HarnessFault, ProcessContext

REPO = Path(__file__).resolve().parents[3]
EVALS = REPO / "evals"
FIXTURE = EVALS / "fixtures" / "order-service"


def _grade_control(tmp_path: Path, attacks: list[str]):
    d = load_native(EVALS / "agent-evals" / "cancellation-support.toml", EVALS)
    crit = next(c for c in d.criteria if c.id == "respects_transitions")
    modified = tmp_path / "modified"
    shutil.copytree(FIXTURE / "test_controls" / "cancels_any_status", modified)
    for attack in attacks:
        plant(modified, attack)
    ctx = ProcessContext(
        definition=d,
        pristine_dir=FIXTURE / "app",
        modified_dir=modified,
        transcript=None,
        work_dir=tmp_path / "work",
    )
    return hidden_tests.grade(crit, ctx)


def test_the_report_and_pytest_forgeries_of_the_workspace_change_nothing(tmp_path: Path) -> None:
    """An atexit hook rewriting the JUnit file, a makereport hookwrapper in tests/conftest.py, sitecustomize /
    usercustomize / .pth files and pytest.ini addopts loading a forging plugin, all at once: black-box judging
    sees none of them."""
    r = _grade_control(tmp_path, ["atexit_junit", "conftest_makereport", "site_files", "ini_addopts"])
    assert r.fraction == 0.0 and r.evidence[0] == "hidden tests: 6/9 passed", r.evidence


def test_a_forged_answer_on_every_descriptor_is_no_answer(tmp_path: Path) -> None:
    """The app prints a result in the child's format on stdout and every descriptor, then leaves before the
    call: without the call's secret it is no answer, and each call fails (the same call runs on the
    pristine app)."""
    r = _grade_control(tmp_path, ["forged_json"])
    assert r.fraction == 0.0 and r.evidence[0] == "hidden tests: 0/9 passed", r.evidence
    assert any("9 of 9 calls of the app failed" in e and "gave no answer" in e for e in r.evidence), (
        r.evidence
    )


# ----------------------------------------------------------------------------- white-box, isolated
APP = {
    "calc.py": "def sub(a, b):\n    return a + b\n",  # wrong: the hidden test fails
    "pytest.ini": "[pytest]\npythonpath = .\n",
    "requirements.txt": "pytest==9.2.0\n",
    "tests/conftest.py": "",
}
HIDDEN = {"test_hidden_sub.py": "from calc import sub\n\n\ndef test_h():\n    assert sub(5, 3) == 2\n"}
FORGE = (
    "\nimport pytest as _p\n\n\n@_p.hookimpl(wrapper=True)\ndef pytest_runtest_makereport(item, call):\n"
    "    report = yield\n    report.outcome = 'passed'\n    return report\n"
)
SHADOW = (
    "import os, sys\nfor a in sys.argv:\n    if a.startswith('--junitxml='):\n        open(a[11:], "
    "'w').write("
    '\'<testsuite><testcase file="tests/_hidden/test_hidden_sub.py" classname="x" name="test_h"/>'
    "</testsuite>')\n"
)
WHITE_BOX_ATTACKS = {
    "conftest": {"tests/conftest.py": FORGE},
    "ini_addopts": {"forge.py": FORGE, "pytest.ini": "[pytest]\npythonpath = .\naddopts = -p forge\n"},
    "pyproject_addopts": {
        "forge.py": FORGE,
        "pytest.ini": None,
        "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["."]\naddopts = "-p forge"\n',
    },
    "sitecustomize": {
        "forge.py": FORGE,
        "sitecustomize.py": "import os\nos.environ['PYTEST_PLUGINS'] = 'forge'\n",
        "forge.pth": "import sitecustomize\n",
    },
    "shadowed_pytest": {"pytest.py": SHADOW},  # `python -m pytest` ran the workspace's pytest.py
}


@pytest.mark.parametrize("attack", sorted(WHITE_BOX_ATTACKS))
def test_white_box_reads_nothing_of_the_workspace_that_decides_an_outcome(
    tmp_path: Path, make_ctx, attack: str
) -> None:
    d = make_definition(
        tmp_path, criteria=[Criterion(id="hidden", description="", weight=1, grader="hidden_tests")]
    )
    write_tree(d.source.parent / "demo" / "hidden_tests", HIDDEN)
    modified = {k: v for k, v in {**APP, **WHITE_BOX_ATTACKS[attack]}.items() if v is not None}
    r = hidden_tests.grade(d.criteria[0], make_ctx(APP, modified, definition=d))
    assert r.fraction == 0.0 and r.evidence[0] == "hidden tests: 0/1 passed", r.evidence


# ----------------------------------------------------------------------------- black-box on a synthetic app
CALC = {
    "calc.py": "import os, sys, time\n\n\ndef add(a, b):\n    return a + b\n\n\ndef refuse(n):\n"
    "    raise LookupError(f'no {n}')\n\n\nBEHAVE = 'well'\n",
    "requirements.txt": "pytest==9.2.0\n",
}
# what the modified app does instead: crash, hang, flood, return what JSON cannot carry
BADLY = CALC["calc.py"].replace("BEHAVE = 'well'\n", "BEHAVE = 'badly'\n")
SCENARIOS = """
def behave(how):
    import calc, os, sys, time
    if calc.BEHAVE == "well":
        return how
    if how == "crash":
        os._exit(3)
    if how == "hang":
        time.sleep(60)
    if how == "flood":
        for fd in range(1, 12):  # stdout is the log; the answer's descriptor is one of the others
            try:
                os.write(fd, b"x" * (2 << 20))
            except OSError:
                pass
    if how == "object":
        return object()
    return how
"""
BLACK_TESTS = """
import pytest
from scenarios import behave


def test_call(app):
    assert app.call("calc:add", 2, b=3) == 5


def test_raised(app):
    with pytest.raises(app.Raised) as info:
        app.call("calc:refuse", 7)
    assert info.value.type == "LookupError" and info.value.is_a("Exception") and info.value.message == "no 7"


@pytest.mark.parametrize("how", ["crash", "hang", "flood", "object"])
def test_misbehaving_child(app, how):
    assert app.run(behave, how) == how


def test_a_caught_failure_still_fails(app):
    try:
        app.run(behave, "crash")
    except BaseException:
        pass
"""


def _black_box_definition(tmp_path: Path, tests: str, scenarios: str = SCENARIOS):
    d = make_definition(
        tmp_path,
        criteria=[
            Criterion(
                id="hidden",
                description="",
                weight=1,
                grader="hidden_tests",
                options={"mode": "black-box", "call_timeout": 2},
            )
        ],
    )
    write_tree(d.source.parent / "demo" / "hidden_tests", {"scenarios.py": scenarios, "test_black.py": tests})
    return d


def test_black_box_calls_answer_plain_data_and_misbehaving_children_fail(tmp_path: Path, make_ctx) -> None:
    d = _black_box_definition(tmp_path, BLACK_TESTS)
    r = hidden_tests.grade(d.criteria[0], make_ctx(CALC, {**CALC, "calc.py": BADLY}, definition=d))
    assert r.evidence[0] == "hidden tests: 2/7 passed", r.evidence
    failed = {e.rsplit("::", 1)[1] for e in r.evidence if e.startswith("failed: ")}
    assert failed == {"test_misbehaving_child", "test_a_caught_failure_still_fails"}, r.evidence
    assert any("5 of 7 calls of the app failed" in e for e in r.evidence), r.evidence
    # the well-behaved app passes them all
    assert hidden_tests.grade(d.criteria[0], make_ctx(CALC, CALC, definition=d)).fraction == 1.0


def test_a_call_that_fails_on_the_pristine_app_too_is_the_harness_s(tmp_path: Path, make_ctx) -> None:
    d = _black_box_definition(
        tmp_path,
        "from scenarios import crash\n\n\ndef test_h(app):\n    app.run(crash)\n",
        "def crash():\n    import os\n    os._exit(3)\n",
    )
    with pytest.raises(HarnessFault, match="fails on the pristine app too"):
        hidden_tests.grade(d.criteria[0], make_ctx(CALC, CALC, definition=d))


def test_black_box_tests_that_import_the_app_are_the_eval_s_fault(tmp_path: Path, make_ctx) -> None:
    d = _black_box_definition(tmp_path, "import calc\n\n\ndef test_h(app):\n    assert calc.add(1, 1) == 2\n")
    with pytest.raises(HarnessFault, match="do not import in the judging process"):
        hidden_tests.grade(d.criteria[0], make_ctx(CALC, CALC, definition=d))


def test_the_plugin_and_the_harness_name_the_same_variables() -> None:
    text = blackbox.PLUGIN.read_text()
    assert f'SOCKET_VARIABLE = "{blackbox.SOCKET_VARIABLE}"' in text
    assert f'TOKEN_VARIABLE = "{blackbox.TOKEN_VARIABLE}"' in text
