from __future__ import annotations

from skillassay.definitions.agent_eval import Criterion, ForbiddenBehaviour
from skillassay.graders import diff
from skillassay.graders.base import matches
from skillassay.workspace.changes import compare_trees

SERVICE = """
from contextlib import contextmanager

class OrderService:
    def __init__(self, conn):
        self._conn = conn

    @contextmanager
    def _unit_of_work(self):
        yield self._conn

    def pay(self, order_id):
        return self._transition(order_id, "paid")

    def _transition(self, order_id, target):
        with self._unit_of_work() as conn:
            conn.execute("UPDATE orders SET status = ? WHERE id = ?", (target, order_id))
"""
MODELS = """
import enum

class OrderStatus(str, enum.Enum):
    PENDING = "pending"
    PAID = "paid"
"""
PRISTINE = {
    "orders/service.py": SERVICE,
    "orders/models.py": MODELS,
    "orders/db.py": "def connect():\n    pass\n",
    "tests/test_service.py": "def test_pay():\n    assert True\n",
}


def crit(**options) -> Criterion:
    return Criterion(id="c", description="d", weight=1, grader="diff", options=options)


def with_cancel(body: str = '        return self._transition(order_id, "cancelled")\n') -> dict[str, str]:
    files = dict(PRISTINE)
    files["orders/service.py"] = SERVICE + "\n    def cancel(self, order_id):\n" + body
    files["orders/models.py"] = MODELS + '    CANCELLED = "cancelled"\n'
    files["tests/test_cancel.py"] = "def test_cancel(service):\n    assert service.cancel(1)\n"
    return files


OWNER = dict(
    owning_module="orders/service.py",
    operation="(?i)cancel",
    transaction="_unit_of_work",
    status_module="orders/models.py",
    status_member="(?i)^cancel",
)


def test_globs():
    assert matches("tests/test_a.py", ["tests/**"])
    assert matches("tests/x/test_a.py", ["tests/**/*.py"])
    assert matches("test_a.py", ["**/test_*.py"])
    assert not matches("orders/service.py", ["orders/*.txt", "tests/**"])
    assert not matches("orders/sub/service.py", ["orders/*.py"])


def test_change_ignores_caches_and_databases(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b" / "__pycache__").mkdir(parents=True)
    (tmp_path / "a" / "x.py").write_text("1")
    (tmp_path / "b" / "x.py").write_text("2")
    (tmp_path / "b" / "orders.db").write_text("data")
    (tmp_path / "b" / "__pycache__" / "x.cpython-311.pyc").write_text("")
    change = compare_trees(tmp_path / "a", tmp_path / "b")
    assert change.changed == ["x.py"] and change.modified == ["x.py"]
    assert "+2" in change.patch()


def test_cancellation_in_the_service_within_the_boundary(make_ctx):
    ctx = make_ctx(PRISTINE, with_cancel())
    r = diff.grade(crit(**OWNER), ctx)
    assert r.fraction == 1.0, r.evidence
    assert any("via OrderService._transition" in e for e in r.evidence)


def test_direct_with_counts_as_inside_the_boundary(make_ctx):
    body = (
        "        with self._unit_of_work() as conn:\n            conn.execute('UPDATE orders SET status=1')\n"
    )
    assert diff.grade(crit(**OWNER), make_ctx(PRISTINE, with_cancel(body))).fraction == 1.0


def test_operation_outside_the_boundary_loses_that_check(make_ctx):
    body = "        self._conn.execute('UPDATE orders SET status = 1')\n"
    r = diff.grade(crit(**OWNER), make_ctx(PRISTINE, with_cancel(body)))
    assert r.fraction == 0.75
    assert any("does not enter the transaction boundary" in e for e in r.evidence)


def test_owner_untouched_and_no_status(make_ctx):
    files = dict(PRISTINE, **{"orders/cli.py": "def cancel(conn, i):\n    pass\n"})
    r = diff.grade(crit(**OWNER), make_ctx(PRISTINE, files))
    assert r.fraction == 0.0
    assert any("not changed" in e for e in r.evidence)


def test_nothing_changed_earns_nothing(make_ctx):
    assert diff.grade(crit(**OWNER), make_ctx(PRISTINE, PRISTINE)).fraction == 0.0


def test_scope_and_preserved_functions(make_ctx):
    opts = dict(scope=["orders/service.py", "orders/models.py", "tests/**"], preserve_functions=True)
    assert diff.grade(crit(**opts), make_ctx(PRISTINE, with_cancel())).fraction == 1.0

    files = with_cancel()
    files["orders/db.py"] = "def connect():\n    return None\n"  # out of scope, and a rewritten function
    r = diff.grade(crit(**opts), make_ctx(PRISTINE, files))
    assert r.fraction == 0.0
    assert any("orders/db.py" in e and "scope" in e for e in r.evidence)
    assert any("orders/db.py::connect rewritten" in e for e in r.evidence)


def test_reformatting_is_not_rewriting_and_may_change_exempts(make_ctx):
    files = with_cancel()
    # a comment and blank lines change nothing in the syntax tree
    files["orders/service.py"] = files["orders/service.py"].replace(
        "    def pay(self, order_id):", "    # pay it\n\n    def pay(self, order_id):"
    )
    assert diff.grade(crit(preserve_functions=True), make_ctx(PRISTINE, files)).fraction == 1.0
    files["orders/service.py"] = files["orders/service.py"].replace('"paid")', '"PAID")')
    assert diff.grade(crit(preserve_functions=True), make_ctx(PRISTINE, files)).fraction == 0.0
    exempt = crit(preserve_functions=True, may_change=["orders/service.py::OrderService.pay"])
    assert diff.grade(exempt, make_ctx(PRISTINE, files)).fraction == 1.0


def test_tests_added(make_ctx):
    assert diff.grade(crit(tests_added=["tests/**"]), make_ctx(PRISTINE, with_cancel())).fraction == 1.0
    files = dict(PRISTINE, **{"orders/service.py": SERVICE + "\n"})
    r = diff.grade(crit(tests_added=["tests/**"]), make_ctx(PRISTINE, files))
    assert r.fraction == 0.0 and "no new test functions" in r.evidence[0]


def test_parallel_service(make_ctx):
    files = with_cancel()
    files["orders/cancellation.py"] = "class CancellationService:\n    def run(self):\n        pass\n"
    files["orders/errors.py"] = "class CancellationError(Exception):\n    pass\n"  # harmless
    ctx = make_ctx(PRISTINE, files)
    r = diff.grade(
        crit(owning_module="orders/service.py", operation="(?i)cancel", no_parallel_service=True), ctx
    )
    assert r.fraction < 1.0
    found = diff.detect_parallel(
        ForbiddenBehaviour(
            id="p",
            description="",
            detector="parallel_service",
            options={"owning_module": "orders/service.py", "operation": "(?i)cancel"},
        ),
        ctx,
    )
    assert found.observed
    assert any("CancellationService" in e for e in found.evidence)
    assert not any("errors.py" in e for e in found.evidence)

    files = with_cancel()
    files["orders/helpers.py"] = "def cancel_order(conn, i):\n    pass\n"
    found = diff.detect_parallel(
        ForbiddenBehaviour(
            id="p",
            description="",
            detector="parallel_service",
            options={"owning_module": "orders/service.py", "operation": "(?i)cancel"},
        ),
        make_ctx(PRISTINE, files),
    )
    assert found.observed and "cancel_order" in found.evidence[0]

    clean = diff.detect_parallel(
        ForbiddenBehaviour(
            id="p",
            description="",
            detector="parallel_service",
            options={"owning_module": "orders/service.py"},
        ),
        make_ctx(PRISTINE, with_cancel()),
    )
    assert not clean.observed
