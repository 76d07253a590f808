"""The output memo (workspace/output_memo.py): its key covers every byte a grader can read, and an entry no
one with the owner's secret wrote is never used. Each attack below is one an agent's workspace, or someone
writing into the cache, could make; each test fails without the defence it names."""

from __future__ import annotations

import os
import sys
import types
from pathlib import Path

import pytest

from skillassay.workspace import output_memo
from skillassay.workspace.output_memo import DIGEST_BYTES, OutputMemo, blake2b


def _tree(root: Path) -> Path:
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("seam.locks.unlock_door(device_id=d)\n")
    (root / "README.md").write_text("an app\n")
    return root


def _key(memo: OutputMemo, tree: Path) -> bytes:
    key = memo.key(["grade", "--plain"], [], [str(tree)])
    assert key is not None
    return key


@pytest.fixture
def memo(tmp_path: Path) -> OutputMemo:
    return OutputMemo(str(tmp_path / "memo"))


def test_an_output_kept_is_given_back_for_the_same_inputs_only(memo: OutputMemo, tmp_path: Path):
    tree = _tree(tmp_path / "app")
    key = _key(memo, tree)
    assert memo.load(key) is None
    memo.save(key, b'{"total": 40.0}\n')
    assert memo.load(key) == b'{"total": 40.0}\n'
    assert memo.load(memo.key(["grade"], [], [str(tree)]) or b"") is None  # other arguments


def test_a_same_size_edit_with_its_time_set_back_is_another_key(memo: OutputMemo, tmp_path: Path):
    # the agent's trick against make-style caches: same length, `touch -d` to the old time
    tree = _tree(tmp_path / "app")
    before = _key(memo, tree)
    source = tree / "src" / "app.py"
    info = source.stat()
    source.write_text("seam.locks.unlock_door(device_id=x)\n")
    os.utime(source, ns=(info.st_atime_ns, info.st_mtime_ns))
    assert source.stat().st_size == info.st_size
    assert _key(memo, tree) != before


def test_what_a_grader_reads_is_in_the_key_and_what_it_skips_is_not(memo: OutputMemo, tmp_path: Path):
    tree = _tree(tmp_path / "app")
    before = _key(memo, tree)
    (tree / "node_modules" / "seam").mkdir(parents=True)
    assert _key(memo, tree) != before  # the folder's presence is seen ...
    with_modules = _key(memo, tree)
    (tree / "node_modules" / "seam" / "index.js").write_text("anything")
    assert _key(memo, tree) == with_modules  # ... its content, which no grader reads, is not
    (tree / "src" / "new.py").write_text("")
    assert _key(memo, tree) != with_modules  # a new empty file is a new input
    with_new = _key(memo, tree)
    (tree / "dist").mkdir()  # a build folder the run created: changes.py lists it as skipped
    assert _key(memo, tree) != with_new


def test_a_link_is_its_target_text_never_what_it_points_at(memo: OutputMemo, tmp_path: Path):
    tree = _tree(tmp_path / "app")
    outside = tmp_path / "outside.py"
    outside.write_text("one")
    (tree / "src" / "linked.py").symlink_to(outside)
    before = _key(memo, tree)
    outside.write_text("two")  # a grader never follows the link, so neither does the key
    assert _key(memo, tree) == before
    (tree / "src" / "linked.py").unlink()
    (tree / "src" / "linked.py").symlink_to(tmp_path / "elsewhere.py")
    assert _key(memo, tree) != before


def test_a_fifo_in_the_tree_is_named_never_opened(memo: OutputMemo, tmp_path: Path):
    tree = _tree(tmp_path / "app")
    os.mkfifo(tree / "src" / "pipe.py")  # opening it for reading would wait for a writer forever
    assert memo.key([], [], [str(tree)]) is not None


def test_a_named_file_is_read_and_a_missing_one_is_an_input_too(memo: OutputMemo, tmp_path: Path):
    tree = _tree(tmp_path / "app")
    answer = tmp_path / "answer_key.json"
    absent = memo.key([], [str(answer)], [str(tree)])
    answer.write_text("{}")
    present = memo.key([], [str(answer)], [str(tree)])
    answer.write_text("[]")
    assert len({absent, present, memo.key([], [str(answer)], [str(tree)])}) == 3


def test_a_tree_too_large_or_missing_is_not_memoized(
    memo: OutputMemo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    tree = _tree(tmp_path / "app")
    assert memo.key([], [], [str(tmp_path / "nowhere")]) is None
    monkeypatch.setattr(output_memo, "MAX_ENTRIES", 1)
    assert memo.key([], [], [str(tree)]) is None
    monkeypatch.setattr(output_memo, "MAX_ENTRIES", 100)
    monkeypatch.setattr(output_memo, "MAX_BYTES", 10)
    assert memo.key([], [], [str(tree)]) is None


def test_an_entry_forged_without_the_secret_is_never_used(memo: OutputMemo, tmp_path: Path):
    tree = _tree(tmp_path / "app")
    key = _key(memo, tree)
    memo.save(key, b'{"total": 10.0}\n')
    entry = Path(memo.folder) / (key.hex() + ".memo")
    payload = entry.read_bytes()[DIGEST_BYTES:].replace(b"10.0", b"99.0")
    # a forger who can write the folder but not read the secret: any MAC of its own making
    for mac in (bytes(DIGEST_BYTES), blake2b(key + payload, digest_size=DIGEST_BYTES).digest()):
        entry.write_bytes(mac + payload)
        assert memo.load(key) is None
    entry.write_bytes(b"short")
    assert memo.load(key) is None


def test_an_entry_moved_from_another_key_is_never_used(memo: OutputMemo, tmp_path: Path):
    # a genuine entry (a golden's 100) copied to the key of a losing workspace
    golden, losing = _tree(tmp_path / "golden"), _tree(tmp_path / "losing")
    (losing / "src" / "app.py").write_text("pass\n")
    good, bad = _key(memo, golden), _key(memo, losing)
    memo.save(good, b'{"total": 100.0}\n')
    folder = Path(memo.folder)
    (folder / (bad.hex() + ".memo")).write_bytes((folder / (good.hex() + ".memo")).read_bytes())
    assert memo.load(bad) is None
    assert memo.load(good) == b'{"total": 100.0}\n'


def test_a_secret_others_can_read_or_a_link_to_one_turns_the_memo_off(memo: OutputMemo, tmp_path: Path):
    tree = _tree(tmp_path / "app")
    key = _key(memo, tree)
    memo.save(key, b"kept\n")
    secret = Path(memo.folder) / "secret"
    assert secret.stat().st_mode & 0o777 == 0o600
    secret.chmod(
        0o644
    )  # a secret someone else could read is no secret: an entry MAC'd with it proves nothing
    assert memo.load(key) is None
    secret.chmod(0o600)
    assert memo.load(key) == b"kept\n"
    planted = tmp_path / "planted"
    planted.write_bytes(secret.read_bytes())
    planted.chmod(0o600)
    secret.unlink()
    secret.symlink_to(planted)
    assert memo.load(key) is None
    memo.save(key, b"again\n")  # nor is anything written beside a secret it will not trust
    assert memo.load(key) is None


def test_an_entry_made_by_other_code_is_not_used(
    memo: OutputMemo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    # the grader's code changed since the entry was made (an upgrade, an edit of a checkout): grade again
    module_file = tmp_path / "grader_part.py"
    module_file.write_text("RULE = 1\n")
    fake = types.ModuleType("grader_part")
    fake.__file__ = str(module_file)
    monkeypatch.setitem(sys.modules, "grader_part", fake)
    tree = _tree(tmp_path / "app")
    key = _key(memo, tree)
    memo.save(key, b"by rule 1\n")
    assert memo.load(key) == b"by rule 1\n"
    module_file.write_text("RULE = 2\n")
    assert memo.load(key) is None


def test_the_folder_keeps_a_bounded_number_of_entries(
    memo: OutputMemo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(output_memo, "MAX_KEPT", 4)
    tree = _tree(tmp_path / "app")
    for i in range(7):
        memo.save(memo.key([str(i)], [], [str(tree)]) or b"", b"x")
    assert len(list(Path(memo.folder).glob("*.memo"))) <= 4


def test_a_plugin_installed_since_the_entry_was_made_grades_again(
    memo: OutputMemo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    # a package registering a parser for `.py` (entry point group skillassay.languages) changes what a grade
    # finds without touching any module the entry names
    site = tmp_path / "site"
    (site / "other-1.0.dist-info").mkdir(parents=True)
    (site / "other-1.0.dist-info" / "entry_points.txt").write_text("[console_scripts]\nother = other:main\n")
    monkeypatch.setattr(sys, "path", [*sys.path, str(site)])
    tree = _tree(tmp_path / "app")
    key = _key(memo, tree)
    memo.save(key, b"kept\n")
    assert memo.load(key) == b"kept\n"
    (site / "other-1.0.dist-info" / "entry_points.txt").write_text(
        "[skillassay.languages]\n.py = other:parse\n"
    )
    assert memo.load(key) is None
    memo.save(key, b"kept again\n")
    assert memo.load(key) == b"kept again\n"
    (site / "third-2.0.dist-info").mkdir()  # a new distribution: its folder's time moves
    os.utime(site, ns=(1, 1))  # as a real install, later than the coarse clock tick of the save above
    assert memo.load(key) is None


def test_a_named_file_behind_a_link_is_read_as_the_grader_reads_it(memo: OutputMemo, tmp_path: Path):
    # the fixture's answer key may be a link (a suite sharing one key): the grader opens it through the link,
    # so a new key behind the same link must be a new input, not "missing" both times
    tree = _tree(tmp_path / "app")
    shared = tmp_path / "shared_key.json"
    shared.write_text('{"expected_calls": {}}')
    answer = tmp_path / "answer_key.json"
    answer.symlink_to(shared)
    before = memo.key([], [str(answer)], [str(tree)])
    shared.write_text('{"expected_calls": {"create": ["customers.push_data"]}}')
    assert memo.key([], [str(answer)], [str(tree)]) != before


def test_a_tree_file_reached_through_a_linked_folder_is_never_read(memo: OutputMemo, tmp_path: Path):
    # a folder swapped for a link to the host after the walk listed it: the read, like every grader's, refuses
    # any link below the tree's root, so no host file's bytes go into a key
    from skillassay.workspace import output_memo as om

    tree = _tree(tmp_path / "app")
    outside = tmp_path / "host"
    outside.mkdir()
    (outside / "app.py").write_text("secret")
    (tree / "src" / "app.py").unlink()
    (tree / "src").rmdir()
    (tree / "src").symlink_to(outside)
    h = blake2b(digest_size=DIGEST_BYTES)
    assert om._feed_entry(h, str(tree), "./src/app.py", [10, 1 << 20]) is False
