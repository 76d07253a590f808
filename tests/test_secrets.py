"""Secrets never reach stored files: values of key-like variables and key-shaped strings are redacted; code
that merely mentions Seam is left alone."""

from __future__ import annotations

import base64
import html
import json
import os
import urllib.parse
from pathlib import Path

import pytest

from skillassay.secrets import (
    MARK,
    Redactor,
    Secret,
    collect,
    redact,
    redact_tree,
    secret_name,
    secret_values,
    without_secrets,
)


def test_values_of_secret_variables_are_redacted() -> None:
    env = {"ANTHROPIC_API_KEY": "abc123-not-shaped-like-a-key", "PATH": "/usr/bin", "MY_TOKEN": "tok-777777"}
    values = secret_values(env)
    assert "/usr/bin" not in values
    out = redact("key abc123-not-shaped-like-a-key and tok-777777 on /usr/bin", values)
    assert out == f"key {MARK} and {MARK} on /usr/bin"


def test_key_shapes_are_redacted_but_identifiers_are_not() -> None:
    text = (
        "seam_test_0123456789abcdef0123456789abcdef sk-ant-api03-" + "a" * 30 + " ghp_" + "b" * 30 + "\n"
        "from services.seam_service import seam_webhook_handler_for_reservations\nSEAM_API_KEY\n"
    )
    out = redact(text)
    assert out.splitlines()[0] == f"{MARK} {MARK} {MARK}"
    assert "seam_webhook_handler_for_reservations" in out and "seam_service" in out and "SEAM_API_KEY" in out


def test_binary_files_holding_a_secret_are_removed_and_key_shapes_in_text_replaced(tmp_path: Path) -> None:
    (tmp_path / "log.txt").write_text("Bearer seam_test_0123456789abcdef0123456789abcdef\n")
    (tmp_path / "img.png").write_bytes(b"\x89PNG\0seam_test_0123456789abcdef0123456789abcdef")
    (tmp_path / "plain.png").write_bytes(b"\x89PNG\0nothing here")
    found = redact_tree(tmp_path)
    assert (tmp_path / "log.txt").read_text() == f"Bearer {MARK}\n"
    assert not (tmp_path / "img.png").exists() and (tmp_path / "plain.png").exists()
    assert {(r.path, r.action) for r in found} == {("log.txt", "replaced"), ("img.png", "removed")}


# ----------------------------------------------------------------------------- names and sources
@pytest.mark.parametrize(
    "name, secret",
    [
        ("ANTHROPIC_API_KEY", True),
        ("MY_TOKEN", True),
        ("GITHUB_TOKENS", True),
        ("CLIENT_SECRET", True),
        ("PGPASSWORD", True),
        ("DB_PASSWD", True),
        ("SSH_PASSPHRASE", True),
        ("GOOGLE_APPLICATION_CREDENTIALS", True),
        ("AUTH", True),
        ("HTTP_AUTHORIZATION", True),
        ("PRIVATE", True),
        ("DB_PASS", True),
        ("DB_PWD", True),
        ("APIKEY", True),
        ("npm_config_//registry.npmjs.org/:_authToken", True),
        ("PATH", False),
        ("PWD", False),
        ("OLDPWD", False),
        ("GIT_AUTHOR_NAME", False),
        ("KEYMAP", False),
        ("TOKENIZERS_PARALLELISM", False),
        ("PASSAGE", False),
        ("DATABASE_URL", False),
    ],
)
def test_which_names_mark_a_secret(name: str, secret: bool) -> None:
    assert secret_name(name) is secret


def test_credentials_in_a_url_are_secret_whatever_the_variable_is_called() -> None:
    env = {
        "DATABASE_URL": "postgres://admin:p%40ss-word9@db:5432/app",
        "HOMEPAGE": "https://example.org/a:b@c",
        "MIRRORS": "https://u1:first-pass1@a.example https://u2:second-pass2@b.example",
    }
    values = {s.value: s.source for s in collect(env)}
    assert values["p%40ss-word9"] == values["p@ss-word9"] == "env:DATABASE_URL (URL credentials)"
    assert "admin:p%40ss-word9" in values and "first-pass1" in values and "second-pass2" in values
    assert not any("example.org" in v for v in values)  # a colon and an @ in a path are not credentials
    assert without_secrets({**env, "PATH": "/bin", "MY_TOKEN": "t" * 10}) == {
        "HOMEPAGE": env["HOMEPAGE"],
        "PATH": "/bin",
    }


def test_values_too_short_to_search_for_are_named() -> None:
    r = Redactor(collect({"SHORT_TOKEN": "abc", "LONG_TOKEN": "abcdefgh"}))
    assert r.too_short == ["env:SHORT_TOKEN"]
    assert r.redact("abc abcdefgh") == f"abc {MARK}"


# ----------------------------------------------------------------------------- forms
SECRET = "s3cr3t-Value_with/odd+chars=="


@pytest.mark.parametrize("prefix", [b"", b"k", b"k=", b"user:"])
def test_base64_of_a_secret_is_found_at_any_alignment_in_both_alphabets(prefix: bytes) -> None:
    r = Redactor.of([SECRET])
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        blob = encode(prefix + SECRET.encode() + b"-tail").decode()
        out = r.redact(f"before {blob} after")
        assert out == f"before {MARK} after", (prefix, encode)  # the whole encoded run goes


def test_every_form_is_found_and_reported_by_its_kind() -> None:
    r = Redactor([Secret(SECRET, "env:MY_SECRET")])
    texts = {
        "raw": SECRET,
        "hex": SECRET.encode().hex(),
        "HEX": SECRET.encode().hex().upper(),
        "url": urllib.parse.quote(SECRET, safe=""),
        "url+": urllib.parse.quote_plus(SECRET),
        "json": json.dumps({"k": SECRET + '"'})[7:-2],
        "html": html.escape(SECRET + "<"),
        "reversed": SECRET[::-1],
    }
    for label, text in texts.items():
        assert SECRET not in r.redact(text) and MARK in r.redact(text), label
    utf16 = SECRET.encode("utf-16-le")
    clean, hits = r.redact_bytes(b"\0\1" + utf16)
    assert utf16 not in clean and hits[0].form == "utf16" and hits[0].source == "env:MY_SECRET"
    assert r.redact("nothing to see") == "nothing to see"


NAMED = "n4med-Secret_value+x="  # a value that can stand in a file name


def test_names_links_and_folders_are_renamed_and_no_recorded_path_holds_the_value(tmp_path: Path) -> None:
    (tmp_path / f"dir-{NAMED}").mkdir()
    (tmp_path / f"dir-{NAMED}" / f"{NAMED[:12]}.txt").write_text("x")
    (tmp_path / f"key-{base64.b64encode(NAMED.encode()).decode().replace('/', '_')}.txt").write_text("y")
    os.symlink(f"/somewhere/{NAMED}", tmp_path / "link")
    skipped = tmp_path / "repo" / ".git"
    skipped.mkdir(parents=True)
    (skipped / NAMED).write_text(NAMED)
    r = Redactor([Secret(NAMED, "env:MY_SECRET"), Secret(NAMED[:12], "env:OTHER_TOKEN")])
    found = r.scrub_tree(tmp_path, skip=lambda rel: rel == "repo/.git")
    names = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*"))
    assert names == [
        "dir-REDACTED",
        "dir-REDACTED/REDACTED.txt",
        "key-REDACTED.txt",
        "link",
        "repo",
        "repo/.git",
        f"repo/.git/{NAMED}",
    ]
    assert os.readlink(tmp_path / "link") == f"/somewhere/{MARK}"
    assert {(f.path, f.where, f.action) for f in found} == {
        ("dir-REDACTED", "name", "renamed"),
        ("dir-REDACTED/REDACTED.txt", "name", "renamed"),
        ("key-REDACTED.txt", "name", "renamed"),
        ("link", "link", "relinked"),
    }
    assert all(NAMED[:12] not in f.model_dump_json() for f in found)


def test_a_record_is_scrubbed_and_stays_valid(tmp_path: Path) -> None:
    from synthetic_runs import make_job

    from skillassay.store.files import scrub_record

    _, runs = make_job(tmp_path, runs=1, evals=("e",), artifacts=False)
    run = runs[0].model_copy(
        update={"error": f"boom with {SECRET} and {base64.b64encode(SECRET.encode()).decode()}"}
    )
    clean, hits = scrub_record(run, Redactor.of([SECRET]))
    assert clean.error == f"boom with {MARK} and {MARK}" and len(hits) == 2
    assert clean.eval_id == run.eval_id


def test_the_app_and_the_graders_commands_get_no_secret(monkeypatch) -> None:
    from skillassay.apps.backends.backend import base_env
    from skillassay.graders.base import command_env

    monkeypatch.setenv("HTTPS_PROXY", "http://me:proxy-pass-1@proxy.invalid:3128")
    monkeypatch.setenv("PIP_INDEX_URL", "https://me:index-pass-2@pypi.invalid/simple")
    monkeypatch.setenv("npm_config_//registry.invalid/:_authToken", "npm-token-3")
    monkeypatch.setenv("NO_PROXY", "internal.invalid")
    monkeypatch.setenv("OPERATOR_API_KEY", "operator-key-4")
    for env in (base_env(), command_env()):
        joined = "\n".join(f"{k}={v}" for k, v in env.items())
        for value in ("proxy-pass-1", "index-pass-2", "npm-token-3", "operator-key-4"):
            assert value not in joined
        assert "internal.invalid" in env["NO_PROXY"]
