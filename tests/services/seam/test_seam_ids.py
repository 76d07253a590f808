"""The emulator's ids: random version 4 UUIDs drawn in batches, never repeated, not even across a fork."""

from __future__ import annotations

import os
import uuid

from skillassay.seam.emulator.store import new_id


def test_ids_are_distinct_random_version_4_uuids():
    ids = [new_id() for _ in range(5_000)]  # many batches
    assert len(set(ids)) == len(ids)
    for value in ids:
        parsed = uuid.UUID(value)
        assert (parsed.version, parsed.variant, str(parsed)) == (4, uuid.RFC_4122, value)
    # every hex digit of the random part varies: no digit left fixed by the formatting
    for position in (0, 9, 15, 20, 25, 35):
        assert len({value[position] for value in ids}) == 16, position
    assert {value[19] for value in ids} == set("89ab")  # the variant digit: its two low bits random


def test_a_forked_child_never_hands_out_its_parents_next_ids():
    new_id()  # the batch is drawn: the parent holds ids it has not handed out yet
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its first ids, to the parent
        os.close(read)
        os.write(write, ",".join(new_id() for _ in range(10)).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        child = set(pipe.read().split(","))
    os.waitpid(pid, 0)
    parent = {new_id() for _ in range(10)}
    assert len(child) == 10
    assert not child & parent
