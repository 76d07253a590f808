"""The Dockerfile subset parser, and how Dockerfile + eval_config `run` become install/build/start steps."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillassay import stacks
from skillassay.apps.runplan import InstallSpec, classify, make_plan
from skillassay.definitions.dockerfile import DockerfileError, logical_lines, parse_dockerfile
from skillassay.definitions.models import RunSteps

FIXTURES = Path(__file__).resolve().parents[3] / "evals" / "fixtures"


def test_node_dockerfile_exec_cmd():
    spec = parse_dockerfile(
        "FROM node:20-slim\nWORKDIR /app\nCOPY package*.json ./\nRUN npm ci\nCOPY . .\n"
        'RUN npm run build\nEXPOSE 3000\nCMD ["node", "dist/index.js"]\n'
    )
    assert spec.runtime == "node" and spec.image == "node:20-slim" and spec.workdir == "/app"
    assert [r.shell for r in spec.runs] == ["npm ci", "npm run build"]
    assert spec.expose == [3000]
    assert spec.start_argv() == ["node", "dist/index.js"]


def test_shell_form_cmd_comments_and_continuations():
    text = """
# syntax=docker/dockerfile:1
FROM python:3.12-slim AS base
ENV PYTHONUNBUFFERED=1 \\
    APP_MODE="sandbox run"
# a comment inside the continuation is dropped, as Docker does
RUN pip install --no-cache-dir \\
# comment
      -r requirements.txt \\
    && python -m compileall .
EXPOSE 5000/tcp
CMD gunicorn -b 0.0.0.0:$PORT app:app
"""
    spec = parse_dockerfile(text)
    assert spec.runtime == "python"
    assert spec.env == {"PYTHONUNBUFFERED": "1", "APP_MODE": "sandbox run"}
    assert spec.runs[0].shell == "pip install --no-cache-dir -r requirements.txt && python -m compileall ."
    assert spec.expose == [5000]
    assert spec.start_argv() == ["/bin/sh", "-c", "gunicorn -b 0.0.0.0:$PORT app:app"]


def test_logical_lines_report_the_first_line_number():
    assert logical_lines("FROM node\n\nRUN a \\\n  b\nCMD x") == [
        (1, "FROM node"),
        (3, "RUN a b"),
        (5, "CMD x"),
    ]


def test_env_legacy_form_arg_substitution_and_relative_workdir():
    spec = parse_dockerfile(
        "ARG VERSION=20\nFROM node:${VERSION}-alpine\nENV NODE_ENV production\n"
        'WORKDIR /srv\nWORKDIR app\nCMD ["npm", "start"]'
    )
    assert spec.image == "node:20-alpine"
    assert spec.env == {"NODE_ENV": "production"}
    assert spec.workdir == "/srv/app"


def test_entrypoint_and_cmd_combine_like_docker():
    spec = parse_dockerfile('FROM python:3.11\nENTRYPOINT ["python"]\nCMD ["app.py", "--port", "5000"]')
    assert spec.start_argv() == ["python", "app.py", "--port", "5000"]
    shell = parse_dockerfile('FROM python:3.11\nENTRYPOINT python app.py\nCMD ["ignored"]')
    assert shell.start_argv() == ["/bin/sh", "-c", "python app.py"]


def test_invalid_json_cmd_falls_back_to_shell_form():
    spec = parse_dockerfile("FROM node:20\nCMD [node, index.js]")
    assert spec.cmd is not None and spec.cmd.shell == "[node, index.js]"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("FROM node:20\nFROM node:20\n", "multi-stage"),
        ("FROM node:20\nFOO bar\n", "FOO is outside the supported Dockerfile subset"),
        ("RUN echo\n", "before FROM"),
        ("FROM golang:1.22\nCMD x\n", "node and python and ruby and php images only"),
        ("# nothing\n", "no FROM"),
        ("FROM node:20\nEXPOSE http\n", "is not a port"),
    ],
)
def test_errors_name_the_line(text, message):
    with pytest.raises(DockerfileError, match=message):
        parse_dockerfile(text, Path("fx/Dockerfile"))


def test_error_message_carries_file_and_line():
    with pytest.raises(DockerfileError) as e:
        parse_dockerfile("FROM node:20\n\nVOLUME /x\nONBUILD RUN x\nBOGUS y\n", Path("fx/Dockerfile"))
    assert str(e.value).startswith("fx/Dockerfile:5:")


def test_classify_install_commands():
    spec = InstallSpec()
    left = classify("npm ci && npm run build && npm prune --production", spec)
    assert spec.npm_argv == ["npm", "ci"] and left == ["npm run build", "npm prune --production"]
    spec = InstallSpec()
    assert classify("npm install express", spec) == ["npm install express"] and spec.npm_argv is None
    spec = InstallSpec()
    assert classify("python -m pip install --no-cache-dir -r requirements.txt gunicorn==22.0", spec) == []
    assert spec.pip_requirements == ["requirements.txt"] and spec.pip_args == ["gunicorn==22.0"]
    spec = InstallSpec()
    assert classify("pip install -e .", spec) == ["pip install -e ."]
    spec = InstallSpec()
    assert classify("apt-get update | tee log", spec) == ["apt-get update | tee log"]


def test_run_section_overrides_the_dockerfile(tmp_path):
    df = tmp_path / "Dockerfile"
    df.write_text('FROM node:20\nRUN npm ci\nRUN npm run build\nCMD ["node", "dist/index.js"]\n')
    plan = make_plan(tmp_path, df, RunSteps(start="npm start", env={"X": "1"}, health_path="/healthz"), 3000)
    assert plan.install.npm_argv == ["npm", "ci"]
    assert plan.build == [["/bin/sh", "-c", "npm run build"]]
    assert plan.start == ["/bin/sh", "-c", "npm start"] and plan.env == {"X": "1"}
    assert plan.health_path == "/healthz" and plan.source == "Dockerfile+run"
    plan = make_plan(
        tmp_path,
        df,
        RunSteps(install=["npm install", "node scripts/gen.js"], build=[], start=["node", "a.js"]),
        None,
    )
    assert plan.install.npm_argv == ["npm", "install"]
    assert plan.build == [["/bin/sh", "-c", "node scripts/gen.js"]]
    assert plan.start == ["node", "a.js"]


def test_run_section_alone_infers_the_runtime(tmp_path):
    (tmp_path / "requirements.txt").write_text("flask\n")
    plan = make_plan(
        tmp_path, None, RunSteps(install=["pip install -r requirements.txt"], start="python app.py"), 5000
    )
    assert plan.runtime == "python" and plan.install.pip_requirements == ["requirements.txt"]


@pytest.mark.parametrize(
    "fixture", sorted(p.name for p in FIXTURES.glob("*") if (p / "Dockerfile").is_file())
)
def test_every_shipped_fixture_dockerfile_parses(fixture):
    spec = parse_dockerfile(
        (FIXTURES / fixture / "Dockerfile").read_text(), FIXTURES / fixture / "Dockerfile"
    )
    assert spec.start_argv()
    app = FIXTURES / fixture / "app"
    plan = make_plan(app, FIXTURES / fixture / "Dockerfile", None, None)
    # npm's and pip's installs are the Dockerfile's, folded; another family's is its stack's, for its manifest
    declared = stacks.family(plan.runtime).dependencies(
        lambda rel: (app / rel).read_bytes() if (app / rel).is_file() else None
    )
    assert not plan.install.empty or (declared is not None and declared.install)
