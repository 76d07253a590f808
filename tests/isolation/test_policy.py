"""A run's sealing policy: the stack's registries unless the definition names its own, plus --allow-host; the
suite, the results, other runs and the operator's home protected."""

from pathlib import Path

from skillassay.definitions import load_suite
from skillassay.isolation.run_policy import run_policy


def test_registries_by_stack_by_definition_and_granted(evals_dir, tmp_path):
    by_id = {d.id: d for d in load_suite(evals_dir)}
    flask, express = by_id["flask-py"], by_id["express-ts"]
    assert run_policy("bubblewrap", flask, tmp_path).registries == ["pypi.org", "files.pythonhosted.org"]
    assert run_policy("bubblewrap", express, tmp_path, ["github.com"]).registries == [
        "registry.npmjs.org",
        "github.com",
    ]
    own = flask.model_copy(update={"registries": ["pypi.internal:8443"]})
    wheels = tmp_path / "wheels"  # beside the results, not holding them: a mount may not uncover them
    policy = run_policy("bubblewrap", own, tmp_path / "results", ["pypi.internal:8443"], [wheels])
    assert policy.registries == ["pypi.internal:8443"]
    assert [m.target for m in policy.mounts] == [wheels]
    protected = policy.protected
    assert protected[str(flask.suite_dir.resolve())] == "suite"
    assert protected[str((tmp_path / "results").resolve())] == "results"
    assert protected[str(Path.home())] == "operator home"
    assert any(label == "other runs" and "*" in root for root, label in protected.items())
