"""Mutation testing of evals (``skillassay check --mutants``): mutants derived from every shipped golden's
syntax tree, the rubric's verdict on each, the schema build that runs them in the sandbox behaving like
each mutant's own source, blind spots failing the check, and the report's Evals page showing the score.

The whole suite through both layers is ``test_check_mutants_on_the_shipped_suite`` (slow: it builds and
runs every mutant; CI runs it)."""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from datetime import UTC, datetime
from pathlib import Path

import pytest
from parts import REPO

from skillassay.definitions import load_suite
from skillassay.orchestrator.mutants.classes import CLASSES, SEAM_CLASSES
from skillassay.orchestrator.mutants.edits import MUTANT_ENV, Mutant, Switch, materialise, schema, ternary
from skillassay.orchestrator.mutants.run import expectations, judge_layers, run_mutation
from skillassay.seam import mutants as seam_mutants
from skillassay.seam.plan import Rubric, RubricCategory
from skillassay.seam.rubric import grade
from skillassay.seam.rubric.grade import endpoints_of
from skillassay.store import mutants as store

TYPECHECK_PROJECTS = Path(__file__).resolve().parent / "data" / "typecheck_projects.js"

SUITE = REPO / "evals"


def _seam_evals():
    return [d for d in load_suite(SUITE) if d.format == "plan-json" and d.golden_dir is not None]


SEAM_EVALS = {d.id: d for d in _seam_evals()}


def _golden_declares_sdk(d) -> bool:
    """The golden's manifest names an official Seam SDK (PyPI or npm `seam`, the gem `seam`)."""
    golden = d.golden_dir
    texts = {
        name: (golden / name).read_text()
        for name in ("requirements.txt", "package.json", "Gemfile")
        if (golden / name).is_file()
    }
    return (
        any(line.split("=")[0].strip() == "seam" for line in texts.get("requirements.txt", "").splitlines())
        or '"seam":' in texts.get("package.json", "")
        or re.search(r"""^\s*gem\s+["']seam["']""", texts.get("Gemfile", ""), re.MULTILINE) is not None
    )


def _parses(path: Path) -> bool:
    if path.suffix == ".py":
        try:
            ast.parse(path.read_bytes())
        except SyntaxError:
            return False
        return True
    import tree_sitter as ts

    if path.suffix == ".rb":
        import tree_sitter_ruby as tsr

        language = ts.Language(tsr.language())
    elif path.suffix == ".php":
        import tree_sitter_php as tsp

        language = ts.Language(tsp.language_php())
    else:
        import tree_sitter_typescript as tst

        language = ts.Language(tst.language_tsx() if path.suffix == ".tsx" else tst.language_typescript())
    return not ts.Parser(language).parse(path.read_bytes()).root_node.has_error


# ----------------------------------------------------------------------------- derivation and the rubric
@pytest.mark.parametrize("eval_id", sorted(SEAM_EVALS))
def test_every_seam_class_is_derived_and_the_rubric_judges_it_as_declared(eval_id, tmp_path):
    """From each shipped golden: one mutant per class, whose own source still parses; the rubric scores each
    below the golden, except the raw HTTP rewrite, which scores exactly as the golden (100)."""
    d = SEAM_EVALS[eval_id]
    mutants, notes, _golden = seam_mutants.derive(d)
    sdk = _golden_declares_sdk(d)
    assert notes == ([] if sdk else ["raw_http: no SDK call to rewrite"])
    assert sorted(m.cls for m in mutants) == sorted(c.id for c in SEAM_CLASSES if sdk or c.id != "raw_http")
    for m in mutants:
        folder = materialise(d.golden_dir, m, tmp_path / m.id)
        for rel in {e.file for e in m.edits}:
            assert _parses(folder / rel), (m.id, rel)
        result = grade(
            d.app_dir,
            folder,
            d.answer_key,
            d.rubric,
            d.config.expected_api_path,
            endpoints=endpoints_of(d.config),
        )
        if CLASSES[m.cls].expect["rubric"] == "equal":
            assert result.total == 100.0, (
                m.id,
                [e.message for c in result.categories.values() for e in c.evidence if not e.ok],
            )
        else:
            assert result.total < 100.0, m.id


def test_mutants_edit_the_syntax_tree_not_the_text(tmp_path):
    """The commented-out call is a comment, the string one a string literal, the uncalled one a nested
    function, the guarded one behind `if False`; the raw HTTP rewrite posts to the route through one helper
    per file."""
    d = SEAM_EVALS["flask-py"]
    mutants = {m.id: m for m in seam_mutants.derive(d)[0]}
    service = "services/reservation_service.py"

    def text(mid: str) -> str:
        return (materialise(d.golden_dir, mutants[mid], tmp_path / mid) / service).read_text()

    assert "# seam.customers.push_data(" in text("commented_out")
    assert "'seam.customers.push_data(" in text("in_string")
    assert "def _skillassay_unused():\n            seam.customers.push_data(" in text("uncalled_function")
    assert "if False:\n            seam.customers.push_data(" in text("false_condition")
    raw = text("raw_http")
    assert raw.count("def _skillassay_seam(path, body):") == 1
    assert '_skillassay_seam("/customers/push_data", {"customer_key": ' in raw
    assert "seam.customers." not in raw
    golden = (d.golden_dir / service).read_text()
    assert text("param_dropped").count("customer_key=") == golden.count("customer_key=") - 1


# ----------------------------------------------------------------------------- the schema
def test_schema_nests_switches_and_keeps_helpers_once(tmp_path):
    golden = tmp_path / "g"
    golden.mkdir()
    source = "import os\n\n\ndef f(x):\n    return g(1, x)\n"
    (golden / "m.py").write_text(source)
    call = source.index("g(1, x)")
    arg = source.index("x)", call)
    a = Mutant(
        "a", "commented_out", "", None, switches=[Switch("m.py", call, call + 7, ternary("python", "None"))]
    )
    b = Mutant(
        "b", "param_dropped", "", None, switches=[Switch("m.py", arg, arg + 1, ternary("python", "0"))]
    )
    helper = "\ndef helper():\n    return 1\n"
    c = Mutant(
        "c",
        "raw_http",
        "",
        None,
        switches=[
            Switch("m.py", call, call + 7, ternary("python", "helper()")),
            Switch("m.py", 10, 10, helper),
        ],
    )
    # crosses the end of a's span (x)\n): no nesting possible, left out
    d = Mutant(
        "d",
        "raw_http",
        "",
        None,
        switches=[Switch("m.py", arg, call + 8, ternary("python", "2")), Switch("m.py", 10, 10, helper)],
    )
    held = schema(golden, [a, b, c, d], tmp_path / "s", lambda rel: "python")
    assert held == ["a", "b", "c"]
    written = (tmp_path / "s" / "m.py").read_text()
    assert written.count("def helper") == 1
    namespace: dict = {}
    exec(compile(written, "m.py", "exec"), namespace)
    namespace["g"] = lambda *args: args
    for mutant, expected in (("", (1, 5)), ("a", None), ("b", (1, 0)), ("c", 1)):
        os.environ[MUTANT_ENV] = mutant
        try:
            assert namespace["f"](5) == expected, mutant
        finally:
            del os.environ[MUTANT_ENV]


_RECORDER = textwrap.dedent("""
    import json, os, sys, types, urllib.request
    sys.path.insert(0, os.getcwd())
    calls = []

    class Namespace:
        def __init__(self, path=()):
            self.path = path
        def __getattr__(self, name):
            return Namespace(self.path + (name,))
        def __call__(self, **kwargs):
            calls.append([".".join(self.path), sorted(kwargs)])
            return types.SimpleNamespace(access_code_id="c1", access_grant_id="g1")

    class Answer:
        def __init__(self, body):
            self.body = body
        def read(self):
            return json.dumps({"ok": True, "thing": {"access_code_id": "c1", "access_grant_id": "g1"}}).encode()
        def __enter__(self):
            return self
        def __exit__(self, *a):
            return False

    def urlopen(request, timeout=None):
        route = request.full_url.split("://", 1)[-1].split("/", 1)[-1].replace("/", ".")
        calls.append([route, sorted(json.loads(request.data))])
        return Answer(request.data)

    urllib.request.urlopen = urlopen
    os.environ.setdefault("SEAM_API_KEY", "seam_test_x")
    import services.seam_service as seam_service
    seam_service.get_seam = lambda: Namespace()
    import services.reservation_service as service
    service.get_seam = lambda: Namespace()
    from models import store
    unit = next(iter(store.units.values()))
    r = service.create_reservation({"guest_name": "G", "guest_email": "g@example.com", "unit_id": unit.id,
                                    "property_id": unit.property_id, "check_in": "2030-01-01T10:00:00Z",
                                    "check_out": "2030-01-02T10:00:00Z"})
    service.update_reservation(r.id, {"check_out": "2030-01-03T10:00:00Z"})
    service.cancel_reservation(r.id)
    print(json.dumps(calls))
""")  # noqa: E501 - code inside a string, kept as written


def _seam_calls(app: Path, mutant: str | None) -> list:
    env = {k: v for k, v in os.environ.items() if k != MUTANT_ENV}
    if mutant is not None:
        env[MUTANT_ENV] = mutant
    done = subprocess.run(
        [sys.executable, "-c", _RECORDER], cwd=app, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_schema_runs_each_mutant_like_its_own_source(tmp_path):
    """flask-py's service driven directly (Seam and HTTP recorded): with SKILLASSAY_MUTANT=<id>, the schema
    makes exactly the Seam calls that mutant's own source makes; with nothing on, the golden's."""
    d = SEAM_EVALS["flask-py"]
    mutants = seam_mutants.derive(d)[0]
    held = schema(
        d.golden_dir, mutants, tmp_path / "schema", lambda rel: "python" if rel.endswith(".py") else "js"
    )
    assert sorted(held) == sorted(m.id for m in mutants)
    golden_calls = _seam_calls(d.golden_dir, None)
    assert [c[0] for c in golden_calls] == [
        "customers.push_data",
        "customers.push_data",
        "customers.delete_data",
    ]
    assert _seam_calls(tmp_path / "schema", "") == golden_calls
    for m in mutants:
        own = _seam_calls(materialise(d.golden_dir, m, tmp_path / m.id), None)
        assert _seam_calls(tmp_path / "schema", m.id) == own, m.id
        if m.cls == "raw_http":
            assert own == golden_calls  # the same routes with the same parameters, over plain HTTP
        else:
            assert own != golden_calls, m.id


# ----------------------------------------------------------------------------- expectations, blind spots
def test_expectations_come_from_the_one_table():
    d = SEAM_EVALS["express-ts"]
    assert expectations(CLASSES["raw_http"], d) == {"rubric": "equal", "sandbox": "equal"}
    assert expectations(CLASSES["update_noop"], d) == {"rubric": "catch", "sandbox": "catch"}
    presence = d.model_copy(
        update={"config": d.config.model_copy(update={"sandbox_update_check": "presence"})}
    )
    assert expectations(CLASSES["update_noop"], presence) == {"rubric": "catch", "sandbox": "any"}
    no_sandbox = d.model_copy(update={"config": None})
    assert expectations(CLASSES["commented_out"], no_sandbox) == {"rubric": "catch"}


def test_a_mutant_no_layer_catches_is_a_blind_spot(tmp_path):
    """A rubric that only counts changed files cannot see a call commented out: with no sandbox to run, every
    mutant meant to be caught is a blind spot, and the check fails."""
    d = SEAM_EVALS["flask-py"]
    files_only = Rubric(
        categories=[RubricCategory(name="file_targeting", weight=100, check="files_modified_match")]
    )
    blind = d.model_copy(update={"rubric": files_only, "config": None})
    report = run_mutation([blind], suite="test")
    assert not report.ok
    (result,) = report.evals
    assert result.score == 0.0
    by_cls = {m.cls: m for m in result.mutants}
    assert by_cls["commented_out"].blind_spot and not by_cls["commented_out"].ok
    assert by_cls["commented_out"].layers["rubric"].caught is False
    assert not by_cls["raw_http"].blind_spot and by_cls["raw_http"].ok  # nothing to catch there


def test_a_correct_rewrite_marked_down_is_not_as_expected(tmp_path):
    """judge_layers: `equal` means exactly the golden's score."""
    from skillassay.orchestrator.grading import GradeOutcome

    golden = {"rubric": GradeOutcome(grades={"rubric_total": 100.0})}
    lower = judge_layers({"rubric": "equal"}, golden, {"rubric": GradeOutcome(grades={"rubric_total": 80.0})})
    assert lower["rubric"].caught and not lower["rubric"].ok
    same = judge_layers({"rubric": "equal"}, golden, {"rubric": GradeOutcome(grades={"rubric_total": 100.0})})
    assert same["rubric"].ok


# ----------------------------------------------------------------------------- report
def test_the_evals_page_shows_each_evals_mutation_score(tmp_path):
    from skillassay.report.site import build_site
    from skillassay.store.mutants import EvalMutation, LayerOutcome, MutantResult, MutationReport

    caught = LayerOutcome(layer="rubric", expected="catch", golden=100, mutant=88.1, caught=True, ok=True)
    missed = LayerOutcome(layer="sandbox", expected="catch", golden=100, mutant=100, caught=False, ok=False)
    report = MutationReport(
        created_at=datetime.now(UTC),
        suite="evals",
        evals=[
            EvalMutation(
                eval_id="flask-py",
                format="plan-json",
                golden={"rubric": 100, "sandbox": 100},
                mutants=[
                    MutantResult(
                        eval_id="flask-py",
                        mutant_id="commented_out",
                        cls="commented_out",
                        title="a call commented out",
                        description="x",
                        layers={"rubric": caught, "sandbox": missed},
                        caught_by=["rubric"],
                        ok=False,
                    ),
                    MutantResult(
                        eval_id="flask-py",
                        mutant_id="in_string",
                        cls="in_string",
                        title="a call in a string",
                        description="y",
                        layers={"rubric": missed.model_copy(update={"layer": "rubric"}), "sandbox": missed},
                        blind_spot=True,
                    ),
                ],
            )
        ],
    )
    results = tmp_path / "results"
    store.write(report, results)
    assert store.read(results).evals[0].score == 0.5
    build_site(results, tmp_path / "site", suite=SUITE)
    page = (tmp_path / "site" / "index.html").read_text()
    assert "<b>50%</b> of the mutants meant to be caught were caught (1 of 2)" in page
    assert "blind spot" in page and "a call commented out" in page
    assert page.count("Not checked yet") == page.count('class="box definition"') - 1


# ----------------------------------------------------------------------------- the shipped suite, both layers
@pytest.mark.slow
@pytest.mark.long(reason="every mutant of the shipped suite, built and graded on both layers")
@pytest.mark.timeout(1800)  # every mutant of 13 evals, built and graded (438 s on 2 cores beside the suite)
def test_check_mutants_on_the_shipped_suite(tmp_path):
    """`skillassay check evals --mutants --jobs 4`: every mutant of every shipped eval caught by the layer
    that should catch it (the raw HTTP rewrite scoring as the golden), exit 0, mutation.json written."""
    results = tmp_path / "results"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "skillassay",
            "check",
            str(SUITE),
            "--mutants",
            "--jobs",
            "4",
            "--results",
            str(results),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    report = store.read(results)
    assert report is not None and report.ok
    seam_ids = set(SEAM_EVALS)
    for e in report.evals:
        assert e.error is None and e.mutants, e.eval_id
        if e.eval_id in seam_ids:
            # a golden calling the HTTP API itself (the Rails ones: the gem cannot be installed here) has
            # no SDK call to rewrite as raw HTTP
            sdk = _golden_declares_sdk(SEAM_EVALS[e.eval_id])
            want = sorted(c.id for c in SEAM_CLASSES if sdk or c.id != "raw_http")
            assert sorted(m.cls for m in e.mutants) == want, e.eval_id
            assert e.score == 1.0, e.eval_id
            if sdk:
                raw = next(m for m in e.mutants if m.cls == "raw_http")
                assert raw.layers["rubric"].mutant == 100.0 and raw.layers["sandbox"].mutant == 100.0
        else:
            assert e.score == 1.0 and all(m.caught_by == ["process"] for m in e.mutants), e.eval_id
    assert {e.eval_id for e in report.evals} >= seam_ids


@pytest.mark.slow
@pytest.mark.long(reason="each express-ts mutant built twice: from the schema build and on its own")
def test_schema_builds_agree_with_each_mutants_own_build(tmp_path):
    """express-ts (a tsc build): the sandbox's verdict on each mutant is the same whether it runs from the
    schema build or from its own source, built on its own (which also proves each mutant's source
    compiles)."""
    d = SEAM_EVALS["express-ts"]
    with_schema = run_mutation([d], suite="t", jobs=3)
    own = run_mutation([d], suite="t", jobs=3, schemata=False)
    a = {m.mutant_id: (m.sandbox_mode, m.layers["sandbox"].mutant) for m in with_schema.evals[0].mutants}
    b = {m.mutant_id: (m.sandbox_mode, m.layers["sandbox"].mutant) for m in own.evals[0].mutants}
    assert {k: v[1] for k, v in a.items()} == {k: v[1] for k, v in b.items()}
    assert {v[0] for v in a.values()} == {"schema"} and {v[0] for v in b.values()} == {"own"}
    assert with_schema.ok and own.ok


@pytest.mark.slow
@pytest.mark.long(reason="the app's install on an empty cache (Next.js: minutes), then tsc over every mutant")
@pytest.mark.parametrize(
    "eval_id",
    sorted(
        i for i, d in SEAM_EVALS.items() if (d.golden_dir / "package.json").exists() and i != "express-ts"
    ),
)
def test_every_typescript_mutant_type_checks(eval_id, tmp_path):
    """Each TypeScript mutant's own source passes `tsc --noEmit -p .` with the app's own dependencies (the
    sandbox's cached install): the schema build stands for sources that build (express-ts is built mutant
    by mutant in test_schema_builds_agree_with_each_mutants_own_build). The app's TypeScript checks every
    mutant in one process (``data/typecheck_projects.js``: a declaration file parsed once for all), and a
    copy of the golden given a type error is checked with them: the checker must find it."""
    from skillassay.apps import deps

    d = SEAM_EVALS[eval_id]
    app = tmp_path / "deps"
    shutil.copytree(d.golden_dir, app, ignore=shutil.ignore_patterns("node_modules", ".next", "dist"))
    deps.ensure_node_modules(app, ["npm", "ci"], dict(os.environ), tmp_path / "install.log", 600)
    modules = (app / "node_modules").resolve()
    mutants = seam_mutants.derive(d)[0]
    folders = {m.id: materialise(d.golden_dir, m, tmp_path / m.id) for m in mutants}
    source = next(e.file for m in mutants for e in m.edits if e.file.endswith((".ts", ".tsx")))
    broken = tmp_path / "golden-with-a-type-error"
    shutil.copytree(d.golden_dir, broken, ignore=shutil.ignore_patterns("node_modules", ".next", "dist"))
    with (broken / source).open("a", encoding="utf-8") as fh:
        fh.write('\nexport const skillassayTypeProbe: number = "not a number";\n')
    for folder in [*folders.values(), broken]:
        (folder / "node_modules").symlink_to(modules)
    done = subprocess.run(
        [
            "node",
            str(TYPECHECK_PROJECTS),
            str(modules / "typescript"),
            *map(str, [*folders.values(), broken]),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout)
    assert {i: found[str(f)] for i, f in folders.items()} == {i: [] for i in folders}
    assert any("skillassayTypeProbe" in line or "TS2322" in line for line in found[str(broken)]), found[
        str(broken)
    ]


def test_check_mutants_prints_each_mutants_static_trace_disagreements(tmp_path, monkeypatch):
    """A mutant's disagreements (its static rubric against its own trace) are printed under the eval's table,
    the agent-written text of a claim escaped from rich markup, and kept in mutation.json."""
    from datetime import UTC, datetime

    from rich.console import Console

    from skillassay.orchestrator.mutants import command
    from skillassay.store import mutants as store
    from skillassay.store.mutants import EvalMutation, MutantResult, MutationReport

    line = "integration_placement: access_grants.update in [red]push[/red] — static: runs; trace: not sent"
    mutant = MutantResult(
        eval_id="e1", mutant_id="m1", cls="c", title="t", description="d", ok=True, disagreements=[line]
    )
    report = MutationReport(
        created_at=datetime.now(UTC),
        suite="s",
        evals=[EvalMutation(eval_id="e1", format="f", mutants=[mutant])],
    )
    monkeypatch.setattr(command, "load_suite", lambda path: [])
    monkeypatch.setattr(command, "run_mutation", lambda *a, **k: report)
    console = Console(record=True, width=300)
    command.check_mutants(tmp_path, jobs=1, results=tmp_path / "results", console=console)
    shown = console.export_text()
    assert f"static/trace disagreement e1 `m1`: {line}" in shown
    kept = store.read(tmp_path / "results")
    assert kept is not None and kept.evals[0].mutants[0].disagreements == [line]


def test_a_ruby_call_moved_into_a_string_does_not_run_from_it(tmp_path):
    """Ruby interpolates `#{...}` (and `#@x`) inside double quotes: the call moved into a string must not
    run from there. The golden's create call is given an interpolated argument; its in_string mutant holds
    no interpolation, and the uncalled and guarded ones are a `def` and an `if false`."""
    import shutil

    import tree_sitter as ts
    import tree_sitter_ruby as tsr

    from skillassay.seam.loader import load_fixture

    fixture = tmp_path / "evals" / "fixtures" / "cowork-rails-rb"
    shutil.copytree(SUITE / "fixtures" / "cowork-rails-rb", fixture)
    shutil.copy(SUITE / "rubric.json", tmp_path / "evals" / "rubric.json")
    api = fixture / "test_golden" / "app" / "services" / "seam_api.rb"
    api.write_text(
        api.read_text().replace(
            'post("/access_codes/create", body)', 'post("/access_codes/create", body.merge(note: "#{name}"))'
        )
    )
    d = load_fixture(fixture)
    found = {m.id: m for m in seam_mutants.derive(d)[0]}
    rel = "app/services/seam_api.rb"
    parser = ts.Parser(ts.Language(tsr.language()))
    moved = materialise(d.golden_dir, found["in_string"], tmp_path / "in_string") / rel
    tree = parser.parse(moved.read_bytes())
    assert not tree.root_node.has_error
    strings = [n for n in _walk(tree.root_node) if n.type == "string" and b"access_codes/create" in n.text]
    assert strings and all(not any(c.type == "interpolation" for c in s.named_children) for s in strings)
    uncalled = materialise(d.golden_dir, found["uncalled_function"], tmp_path / "uncalled") / rel
    assert "def _skillassay_unused\n" in uncalled.read_text()
    guarded = (materialise(d.golden_dir, found["false_condition"], tmp_path / "guarded") / rel).read_text()
    assert "(false ? (post(" in guarded


def _walk(node):
    yield node
    for child in node.children:
        yield from _walk(child)


GEM_SEAM_API = """
require "seam"

# The gem seam, as an app written where RubyGems answers calls it
class SeamApi
  def self.create_access_code(device_id:, name:, starts_at:, ends_at:)
    client.access_codes.create(device_id: device_id, name: name, starts_at: starts_at, ends_at: ends_at)
  end

  def self.update_access_code(access_code_id:, starts_at:, ends_at:)
    client.access_codes.update(access_code_id: access_code_id, starts_at: starts_at, ends_at: ends_at)
  end

  def self.delete_access_code(access_code_id:)
    client.access_codes.delete(access_code_id: access_code_id)
  end

  def self.client
    @client ||= Seam.new(api_key: ENV.fetch("SEAM_API_KEY"))
  end
end
"""


def test_a_rails_golden_on_the_gem_gets_every_class_in_ruby(tmp_path):
    """A golden calling the gem (`client.access_codes.create(device_id: ...)`; not installable here, so read
    only): every Seam class derived, each mutant's own source valid Ruby, the rubric catching all but the
    raw HTTP rewrite, which it scores as the golden."""
    import shutil

    import tree_sitter as ts
    import tree_sitter_ruby as tsr

    from skillassay.seam.loader import load_fixture

    fixture = tmp_path / "evals" / "fixtures" / "cowork-rails-rb"
    shutil.copytree(SUITE / "fixtures" / "cowork-rails-rb", fixture)
    shutil.copy(SUITE / "rubric.json", tmp_path / "evals" / "rubric.json")
    golden = fixture / "test_golden"
    (golden / "app" / "services" / "seam_api.rb").write_text(GEM_SEAM_API)
    service = golden / "app" / "services" / "booking_service.rb"
    service.write_text(
        service.read_text().replace('access_code.fetch("access_code_id")', "access_code.access_code_id")
    )
    d = load_fixture(fixture)
    found, notes, _golden = seam_mutants.derive(d)
    assert notes == []
    assert sorted(m.cls for m in found) == sorted(c.id for c in SEAM_CLASSES)
    parser = ts.Parser(ts.Language(tsr.language()))
    for m in found:
        folder = materialise(d.golden_dir, m, tmp_path / m.id)
        for rel in {e.file for e in m.edits}:
            assert not parser.parse((folder / rel).read_bytes()).root_node.has_error, (m.id, rel)
        result = grade(
            d.app_dir,
            folder,
            d.answer_key,
            d.rubric,
            d.config.expected_api_path,
            endpoints=endpoints_of(d.config),
        )
        if CLASSES[m.cls].expect["rubric"] == "equal":
            assert result.total == 100.0, (
                m.id,
                [e.message for c in result.categories.values() for e in c.evidence],
            )
        else:
            assert result.total < 100.0, m.id
    dropped = next(m for m in found if m.cls == "param_dropped")
    assert "device_id: device_id" not in (tmp_path / "param_dropped" / "app/services/seam_api.rb").read_text()
    assert dropped.switches and "**(" in dropped.switches[0].form
