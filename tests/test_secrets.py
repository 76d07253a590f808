"""Secrets never reach stored files: values of key-like variables and key-shaped strings are redacted; code that
merely mentions Seam is left alone."""

from __future__ import annotations

from pathlib import Path

from skillassay.secrets import MARK, redact, redact_tree, secret_values


def test_values_of_secret_variables_are_redacted() -> None:
    env = {"ANTHROPIC_API_KEY": "abc123-not-shaped-like-a-key", "PATH": "/usr/bin", "MY_TOKEN": "tok-777777"}
    values = secret_values(env)
    assert "/usr/bin" not in values
    out = redact("key abc123-not-shaped-like-a-key and tok-777777 on /usr/bin", values)
    assert out == f"key {MARK} and {MARK} on /usr/bin"


def test_key_shapes_are_redacted_but_identifiers_are_not() -> None:
    text = ("seam_test_0123456789abcdef0123456789abcdef sk-ant-api03-" + "a" * 30 + " ghp_" + "b" * 30 + "\n"
            "from services.seam_service import seam_webhook_handler_for_reservations\nSEAM_API_KEY\n")
    out = redact(text)
    assert out.splitlines()[0] == f"{MARK} {MARK} {MARK}"
    assert "seam_webhook_handler_for_reservations" in out and "seam_service" in out and "SEAM_API_KEY" in out


def test_redact_tree_leaves_binary_files(tmp_path: Path) -> None:
    (tmp_path / "log.txt").write_text("Bearer seam_test_0123456789abcdef0123456789abcdef\n")
    (tmp_path / "img.png").write_bytes(b"\x89PNG\0seam_test_0123456789abcdef0123456789abcdef")
    redact_tree(tmp_path)
    assert (tmp_path / "log.txt").read_text() == f"Bearer {MARK}\n"
    assert b"seam_test_0123456789abcdef" in (tmp_path / "img.png").read_bytes()
