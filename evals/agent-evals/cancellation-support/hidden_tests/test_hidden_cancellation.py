"""Hidden tests of cancellation-support: copied into a copy of the agent's workspace after it finished.

Self-contained (no fixtures from the agent's conftest). They find the cancel operation on OrderService by name
(``cancel`` or ``cancel_order``) and the cancelled status by value, so any reasonable naming works.
"""

import pytest

from orders.db import connect
from orders.models import InvalidTransition, OrderNotFound, OrderStatus
from orders.service import OrderService


@pytest.fixture
def svc(tmp_path):
    conn = connect(tmp_path / "hidden.db")
    yield OrderService(conn)
    conn.close()


def _cancel(svc, order_id):
    for name in ("cancel", "cancel_order"):
        if hasattr(svc, name):
            return getattr(svc, name)(order_id)
    pytest.fail("OrderService has no cancel operation (cancel / cancel_order)")


def _cancelled():
    for status in OrderStatus:
        if status.value in ("cancelled", "canceled"):
            return status
    pytest.fail("OrderStatus has no cancelled status")


def _order_in(svc, status):
    order = svc.create_order("hidden", 4200)
    steps = {"pending": [], "paid": ["pay"], "shipped": ["pay", "ship"], "delivered": ["pay", "ship", "deliver"]}
    for step in steps[status]:
        getattr(svc, step)(order.id)
    return order.id


@pytest.mark.parametrize("status", ["pending", "paid"])
def test_hidden_cancel_permitted(svc, status):
    order_id = _order_in(svc, status)
    _cancel(svc, order_id)
    assert svc.get(order_id).status is _cancelled()
    assert svc.history(order_id)[-1] is _cancelled()


@pytest.mark.parametrize("status", ["shipped", "delivered"])
def test_hidden_cancel_refused_after_shipping(svc, status):
    order_id = _order_in(svc, status)
    history = svc.history(order_id)
    with pytest.raises(InvalidTransition):
        _cancel(svc, order_id)
    assert svc.get(order_id).status.value == status
    assert svc.history(order_id) == history


def test_hidden_cancel_twice_is_refused(svc):
    order_id = _order_in(svc, "pending")
    _cancel(svc, order_id)
    with pytest.raises(InvalidTransition):
        _cancel(svc, order_id)
    assert len(svc.history(order_id)) == 2


@pytest.mark.parametrize("step", ["pay", "ship", "deliver"])
def test_hidden_cancelled_order_is_final(svc, step):
    order_id = _order_in(svc, "pending")
    _cancel(svc, order_id)
    with pytest.raises(InvalidTransition):
        getattr(svc, step)(order_id)


def test_hidden_cancel_unknown_order(svc):
    with pytest.raises(OrderNotFound):
        _cancel(svc, 424242)
