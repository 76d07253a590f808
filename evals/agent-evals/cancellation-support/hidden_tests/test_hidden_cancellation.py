"""Hidden tests of cancellation-support, black-box: run by skillassay's own pytest, outside the agent's workspace;
every call of the app runs in a sealed child (``scenarios.py``) and comes back as plain data, judged here."""

import pytest
from scenarios import cancel_from, cancel_twice, cancel_unknown, step_after_cancel

CANCELLED = ("cancelled", "canceled")


@pytest.mark.parametrize("status", ["pending", "paid"])
def test_hidden_cancel_permitted(app, status):
    got = app.run(cancel_from, status)
    assert got["error"] is None
    assert got["after"]["status"] in CANCELLED
    assert got["after"]["history"][-1] in CANCELLED
    assert got["after"]["history"][:-1] == got["before"]["history"]


@pytest.mark.parametrize("status", ["shipped", "delivered"])
def test_hidden_cancel_refused_after_shipping(app, status):
    got = app.run(cancel_from, status)
    assert got["error"] == "InvalidTransition"
    assert got["after"] == got["before"]
    assert got["after"]["status"] == status


def test_hidden_cancel_twice_is_refused(app):
    got = app.run(cancel_twice)
    assert got["first"] is None
    assert got["second"] == "InvalidTransition"
    assert len(got["after"]["history"]) == 2


@pytest.mark.parametrize("step", ["pay", "ship", "deliver"])
def test_hidden_cancelled_order_is_final(app, step):
    got = app.run(step_after_cancel, step)
    assert got["cancel"] is None
    assert got["step"] == "InvalidTransition"


def test_hidden_cancel_unknown_order(app):
    assert app.run(cancel_unknown) == "OrderNotFound"
