"""Scenarios of cancellation-support's hidden tests: each runs in a sealed child on the agent's workspace (the
``app`` fixture of skillassay's black-box hidden tests) and returns plain data for the tests to judge. Standard
library and the app only, imported inside the functions (this module is imported by the judging process too).

The cancel operation is found on OrderService by name (``cancel`` or ``cancel_order``) and statuses are given by
value, so any reasonable naming works.
"""

import os
import tempfile

STEPS = {"pending": [], "paid": ["pay"], "shipped": ["pay", "ship"], "delivered": ["pay", "ship", "deliver"]}


def _service():
    from orders.db import connect
    from orders.service import OrderService

    return OrderService(connect(os.path.join(tempfile.mkdtemp(), "hidden.db")))


def _cancel(svc, order_id):
    for name in ("cancel", "cancel_order"):
        if hasattr(svc, name):
            return getattr(svc, name)(order_id)
    raise LookupError("OrderService has no cancel operation (cancel / cancel_order)")


def _error(action, *args):
    """None when ``action`` succeeds, else the name of the app's error it raised (InvalidTransition and
    OrderNotFound by class, subclasses included), else the exception's own class name."""
    from orders.models import InvalidTransition, OrderNotFound

    try:
        action(*args)
    except (InvalidTransition, OrderNotFound) as exc:
        return "InvalidTransition" if isinstance(exc, InvalidTransition) else "OrderNotFound"
    except Exception as exc:  # noqa: BLE001 - what the tests are told
        return type(exc).__name__
    return None


def _state(svc, order_id):
    return {"status": svc.get(order_id).status.value, "history": [s.value for s in svc.history(order_id)]}


def _order_in(svc, status):
    order = svc.create_order("hidden", 4200)
    for step in STEPS[status]:
        getattr(svc, step)(order.id)
    return order.id


def cancel_from(status):
    """Cancel an order in ``status``: its state before, what cancelling raised, its state after."""
    svc = _service()
    order_id = _order_in(svc, status)
    before = _state(svc, order_id)
    return {"before": before, "error": _error(_cancel, svc, order_id), "after": _state(svc, order_id)}


def cancel_twice():
    """Cancel a pending order twice: what each attempt raised, and the state after."""
    svc = _service()
    order_id = _order_in(svc, "pending")
    first = _error(_cancel, svc, order_id)
    return {"first": first, "second": _error(_cancel, svc, order_id), "after": _state(svc, order_id)}


def step_after_cancel(step):
    """Cancel a pending order, then try ``step`` (pay, ship, deliver) on it: what each raised."""
    svc = _service()
    order_id = _order_in(svc, "pending")
    cancelled = _error(_cancel, svc, order_id)
    return {"cancel": cancelled, "step": _error(getattr(svc, step), order_id)}


def cancel_unknown():
    """Cancel an order that does not exist: what it raised."""
    return _error(_cancel, _service(), 424242)
