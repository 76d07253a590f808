"""Sources that fool a regular-expression checker must be graded by what the code does."""

from __future__ import annotations

import pytest
from rubric_helpers import RA_KEY, RA_KEY_PY, scores

from skillassay.seam.plan import AnswerKey

TS_KEY = AnswerKey(
    expected_calls={"create": ["customers.push_data"]},
    expected_placements={"customers.push_data": ["createReservation"]},
    required_parameters={"push_data": ["customer_key", "reservations", "user_identities"]},
)
PY_KEY = AnswerKey(
    expected_calls={"create": ["customers.push_data"]},
    expected_placements={"customers.push_data": ["create_reservation"]},
    required_parameters={"push_data": ["customer_key", "reservations", "user_identities"]},
)

TS_PRISTINE = {"src/service.ts": "export async function createReservation(r: any) { return r; }\n"}
PY_PRISTINE = {"service.py": "def create_reservation(r):\n    return r\n"}

TS_CASES = {
    "commented-out": """
        import { Seam } from 'seam';
        const seam = new Seam();
        export async function createReservation(r: any) {
          // await seam.customers.pushData({ customer_key: 'p', reservations: [], user_identities: [] });
          /* await seam.customers.pushData({ customer_key: 'p', reservations: [], user_identities: [] }); */
          return r;
        }
    """,
    "in-a-string": """
        import { Seam } from 'seam';
        const seam = new Seam();
        export async function createReservation(r: any) {
          const todo = "await seam.customers.pushData({ customer_key: 'p', reservations: [], user_identities: [] })";
          const tpl = `seam.customers.pushData({ customer_key })`;
          console.log(todo, tpl);
          return r;
        }
    """,  # noqa: E501 - code inside a string, kept as written
    "unrelated-function": """
        import { Seam } from 'seam';
        const seam = new Seam();
        export async function createReservation(r: any) {
          return r;
        }
        export async function neverCalled(r: any) {
          await seam.customers.pushData({ customer_key: 'p', reservations: [], user_identities: [] });
        }
    """,
}
PY_CASES = {
    "commented-out": """
        from seam import Seam

        seam = Seam()


        def create_reservation(r):
            # seam.customers.push_data(customer_key="p", reservations=[], user_identities=[])
            return r
    """,
    "in-a-string": '''
        from seam import Seam

        seam = Seam()


        def create_reservation(r):
            """Calls seam.customers.push_data(customer_key="p", reservations=[], user_identities=[])."""
            note = 'seam.customers.push_data(customer_key="p", reservations=[], user_identities=[])'
            return r, note
    ''',
    "unrelated-function": """
        from seam import Seam

        seam = Seam()


        def create_reservation(r):
            return r


        def never_called(r):
            seam.customers.push_data(customer_key="p", reservations=[], user_identities=[])
    """,
}


@pytest.mark.parametrize("case", sorted(TS_CASES))
def test_typescript(make_app, case):
    s = scores(make_app(TS_PRISTINE, {"src/service.ts": TS_CASES[case]}).grade(TS_KEY))
    assert s["integration_placement"] == 0.0
    assert s["lifecycle_completeness"] == 0.0
    if case == "unrelated-function":
        assert s["api_path_selection"] == 1.0  # the call exists, just not where it belongs
    else:
        assert s["api_path_selection"] == 0.0
        assert s["api_correctness"] == 0.0


@pytest.mark.parametrize("case", sorted(PY_CASES))
def test_python(make_app, case):
    s = scores(make_app(PY_PRISTINE, {"service.py": PY_CASES[case]}).grade(PY_KEY))
    assert s["integration_placement"] == 0.0
    assert s["lifecycle_completeness"] == 0.0
    if case == "unrelated-function":
        assert s["api_path_selection"] == 1.0
    else:
        assert s["api_path_selection"] == 0.0
        assert s["api_correctness"] == 0.0


def test_parameter_names_elsewhere_in_the_file_do_not_count_typescript(make_app):
    source = """
        import { Seam } from 'seam';
        const seam = new Seam();
        const docs = { customer_key: 'see README', reservations: [], user_identities: [] };
        // customer_key, reservations, user_identities
        export async function createReservation(r: any) {
          const unrelated = { customer_key: r.p, reservations: [r], user_identities: [] };
          console.log(unrelated, docs, "customer_key reservations user_identities");
          await seam.customers.pushData({ customer_key: r.p });
          return r;
        }
    """
    result = make_app(TS_PRISTINE, {"src/service.ts": source}).grade(TS_KEY)
    assert result.categories["api_correctness"].score == 0.33
    assert "missing reservations, user_identities" in result.categories["api_correctness"].evidence[0].message


def test_parameter_names_elsewhere_in_the_file_do_not_count_python(make_app):
    source = '''
        from seam import Seam

        seam = Seam()
        DOCS = {"customer_key": 1, "reservations": [], "user_identities": []}


        def create_reservation(r):
            """Pass customer_key, reservations and user_identities."""
            reservations = [r]
            user_identities = []
            seam.customers.push_data(customer_key=r["p"])
            return reservations, user_identities, DOCS
    '''
    result = make_app(PY_PRISTINE, {"service.py": source}).grade(PY_KEY)
    assert result.categories["api_correctness"].score == 0.33


def test_an_orm_with_a_namespace_named_like_seams_is_not_seam(make_app):
    source = """
        import { db } from './db';
        export async function createReservation(r: any) {
          await db.customers.pushData({ customer_key: 'p', reservations: [], user_identities: [] });
          return r;
        }
    """
    s = scores(make_app(TS_PRISTINE, {"src/service.ts": source}).grade(TS_KEY))
    assert s["api_path_selection"] == 0.0


def test_full_lifecycle_keys_still_pass(make_app):
    """Sanity: the shared answer keys used elsewhere parse and run against an empty change."""
    app = make_app(PY_PRISTINE, {})
    assert app.grade(RA_KEY_PY).total == 20.0  # nothing expected modified, no new files: file_targeting only
    assert app.grade(RA_KEY).total == 20.0
