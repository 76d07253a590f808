"""Every check on small TypeScript / JavaScript apps."""

from __future__ import annotations

import dataclasses
import json

from rubric_helpers import RA_KEY, scores

from skillassay.seam.plan import AnswerKey

PRISTINE = {
    "package.json": '{"name": "pms", "dependencies": {"express": "4.21.2"}}\n',
    "src/index.ts": """
        import express from 'express';
        import { router } from './routes/reservations';
        const app = express();
        app.use(express.json());
        app.use('/api', router);
        app.get('/health', (_req, res) => res.json({ ok: true }));
        app.listen(3000);
    """,
    "src/routes/reservations.ts": """
        import { Router } from 'express';
        import { createReservation, updateReservation, cancelReservation } from '../services/reservationService';
        export const router = Router();
        router.post('/reservations', async (req, res) => res.json(await createReservation(req.body)));
        router.put('/reservations/:id', async (req, res) => res.json(await updateReservation(req.params.id, req.body)));
        router.delete('/reservations/:id', async (req, res) => res.json(await cancelReservation(req.params.id)));
    """,  # noqa: E501 - code inside a string, kept as written
    "src/services/reservationService.ts": """
        export async function createReservation(input: any) {
          const reservation = { id: 'r1', ...input };
          return reservation;
        }
        export async function updateReservation(id: string, changes: any) {
          return { id, ...changes };
        }
        export async function cancelReservation(id: string) {
          return { id, status: 'cancelled' };
        }
    """,
}

SERVICE_GOLDEN = """
    import { Seam } from 'seam';
    const seam = new Seam();

    function payload(r: any) {
      return {
        customer_key: r.propertyId,
        user_identities: [{ user_identity_key: r.guestId, name: r.guestName }],
        reservations: [{ reservation_key: r.id, user_identity_key: r.guestId, space_keys: [r.unitId] }],
      };
    }

    export async function createReservation(input: any) {
      const reservation = { id: 'r1', ...input };
      await seam.customers.pushData(payload(reservation));
      return reservation;
    }
    export async function updateReservation(id: string, changes: any) {
      const reservation = { id, ...changes };
      await seam.customers.pushData(payload(reservation));
      return reservation;
    }
    export async function cancelReservation(id: string) {
      await seam.customers.deleteData({ customer_keys: ['p1'], reservation_keys: [id] });
      return { id, status: 'cancelled' };
    }
"""

WEBHOOK = """
    import { Router } from 'express';
    export const seamWebhooks = Router();
    seamWebhooks.post('/webhooks/seam', (req, res) => {
      switch (req.body.event_type) {
        case 'access_code.set_on_device':
          console.log('set');
          break;
        case 'device.disconnected':
          console.log('offline');
          break;
      }
      res.sendStatus(204);
    });
"""


def test_golden_scores_100(make_app):
    app = make_app(
        PRISTINE,
        {"src/services/reservationService.ts": SERVICE_GOLDEN, "src/routes/seamWebhooks.ts": WEBHOOK},
    )
    result = app.grade(
        dataclasses.replace(
            RA_KEY,
            expected_files_modified=["src/services/reservationService.ts"],
            expected_new_files_allowed=["src/routes/seamWebhooks.ts"],
        )
    )
    assert result.total == 100.0, json.dumps(result.to_json(), indent=1)
    evidence = result.categories["api_correctness"].evidence
    assert any("read as `customer_keys`" in e.message for e in evidence)


def test_wrapper_in_new_file_injected_client_and_arrow_functions(make_app):
    """createReservation -> seamService.syncReservation -> this.client.customers.pushData(payload)."""
    service = """
        import { seamService } from './seamService';
        export const createReservation = async (input: any) => {
          const reservation = { id: 'r1', ...input };
          await seamService.syncReservation(reservation);
          return reservation;
        };
        export const updateReservation = async (id: string, changes: any) => ({ id, ...changes });
        export const cancelReservation = async (id: string) => {
          await seamService.forget(id);
          return { id };
        };
    """
    seam_service = """
        import { SeamHttp } from '@seamapi/http';
        class SeamService {
          constructor(private client: SeamHttp) {}
          async syncReservation(r: any) {
            const base = { customer_key: r.propertyId };
            const payload = {
              ...base,
              user_identities: [{ user_identity_key: r.guestId }],
              reservations: [r].map((x) => ({ reservation_key: x.id, space_keys: [x.unitId] })),
            };
            return this.push(payload);
          }
          private async push(payload: any) {
            const customers = this.client.customers;
            await customers.pushData(payload);
          }
          forget = async (id: string) => {
            await this.client.customers.deleteData({ reservation_keys: [id] });
          };
        }
        export const seamService = new SeamService(new SeamHttp());
    """
    app = make_app(
        PRISTINE, {"src/services/reservationService.ts": service, "src/services/seamService.ts": seam_service}
    )
    result = app.grade()
    s = scores(result)
    assert s["api_path_selection"] == 1.0
    assert s["integration_placement"] == 0.66  # update never reaches Seam: 2 of 3 placements
    placement = result.categories["integration_placement"].evidence
    chain = next(e.message for e in placement if e.ok and "createReservation" in e.message)
    assert "createReservation -> SeamService.syncReservation -> SeamService.push" in chain
    # push_data: all three present through spread and .map; delete_data: customer_key missing
    assert s["api_correctness"] == 0.75
    assert s["lifecycle_completeness"] == 0.66
    assert s["webhook_setup"] == 0.0


def test_get_seam_accessor_and_require(make_app):
    service = """
        const { getSeam } = require('./seam');
        async function createReservation(input) {
          const r = { id: 'r1', ...input };
          await getSeam().customers.pushData({ customer_key: 'p', reservations: [{ reservation_key: r.id }],
                                               user_identities: [] });
          return r;
        }
        module.exports = { createReservation };
    """
    app = make_app({"src/service.js": "function createReservation() {}\n"}, {"src/service.js": service})
    key = AnswerKey(
        expected_calls={"create": ["customers.push_data"]},
        expected_placements={"customers.push_data": ["createReservation"]},
        required_parameters={
            "push_data": ["customer_key", "reservations[].reservation_key", "reservations[].space_keys"]
        },
    )
    s = scores(app.grade(key))
    assert s["integration_placement"] == 1.0
    assert s["api_correctness"] == 0.66  # space_keys missing inside the reservation


def test_snake_case_method_in_javascript_counts_for_path_but_not_correctness(make_app):
    service = SERVICE_GOLDEN.replace("seam.customers.pushData", "seam.customers.push_data")
    result = make_app(PRISTINE, {"src/services/reservationService.ts": service}).grade()
    s = scores(result)
    assert s["api_path_selection"] == 1.0
    assert s["integration_placement"] == 1.0
    assert s["api_correctness"] == 0.5  # push_data calls score 0, delete_data 1
    problems = [e.message for e in result.categories["api_correctness"].evidence if not e.ok]
    assert any("its method is `customers.pushData`" in p for p in problems)


def test_wrong_path_access_grants(make_app):
    service = SERVICE_GOLDEN.replace(
        "seam.customers.pushData(payload(reservation))",
        "seam.accessGrants.create({ user_identity_id: 'u', requested_access_methods: [] })",
    )
    s = scores(make_app(PRISTINE, {"src/services/reservationService.ts": service}).grade())
    assert s["api_path_selection"] == 0.0
    assert s["integration_placement"] == 0.33  # only delete_data in cancelReservation


def test_both_paths_scores_half(make_app):
    service = SERVICE_GOLDEN.replace(
        "await seam.customers.deleteData(",
        "await seam.accessCodes.create({ device_id: 'd' });\n  await seam.customers.deleteData(",
    )
    s = scores(make_app(PRISTINE, {"src/services/reservationService.ts": service}).grade())
    assert s["api_path_selection"] == 0.5


def test_access_codes_path_with_lower_level_alias(make_app):
    service = SERVICE_GOLDEN.replace(
        "seam.customers.pushData(payload(reservation))",
        "seam.accessCodes.create({ device_id: 'd', code: '1234' })",
    )
    key = AnswerKey(
        expected_calls={"create": ["access_codes.create"]},
        expected_placements={"access_codes.create": ["createReservation"]},
        required_parameters={"create": ["device_id", "code", "starts_at"]},
    )
    s = scores(make_app(PRISTINE, {"src/services/reservationService.ts": service}).grade(key, "lower_level"))
    assert s["api_path_selection"] == 1.0
    assert s["api_correctness"] == 0.66


def test_files_modified_and_unexpected_new_files(make_app):
    key = dataclasses.replace(
        RA_KEY,
        expected_files_modified=["src/services/reservationService.ts", "src/routes/reservations.ts"],
        expected_new_files_allowed=["src/lib/*.ts"],
    )
    app = make_app(
        PRISTINE,
        {
            "src/services/reservationService.ts": SERVICE_GOLDEN,
            "src/lib/seam.ts": "export const x = 1;\n",
            "src/seam-notes.md": "notes\n",
            "node_modules/seam/index.js": "ignored\n",
        },
    )
    result = app.grade(key)
    # 1 of 2 expected modified (0.5) - 0.3 x 1 unexpected of 2 new files (0.15) = 0.35
    assert result.categories["file_targeting"].score == 0.35
    messages = [e.message for e in result.categories["file_targeting"].evidence]
    assert "unexpected new file src/seam-notes.md" in messages
    assert not any("node_modules" in m for m in messages)


def test_webhook_route_without_seam_events_scores_half(make_app):
    hook = """
        import { Router } from 'express';
        export const r = Router();
        r.post('/webhooks/seam', (req, res) => { console.log('access_code.set_on_device'); res.sendStatus(200); });
    """  # noqa: E501 - code inside a string, kept as written
    s = scores(make_app(PRISTINE, {"src/routes/hooks.ts": hook}).grade())
    assert s["webhook_setup"] == 0.5  # the event name is only logged, not handled


def test_webhook_handler_by_name_with_event_list_and_route_chain(make_app):
    hook = """
        import express from 'express';
        const HANDLED = ['access_method.issued', 'access_code.failed_to_set_on_device'];
        export function handleSeamEvent(req: express.Request, res: express.Response) {
          if (HANDLED.includes(req.body.event_type)) { console.log(req.body); }
          res.sendStatus(204);
        }
        export const app = express();
        app.route('/hooks/seam').post(express.raw({ type: '*/*' }), handleSeamEvent);
    """
    result = make_app(PRISTINE, {"src/hooks.ts": hook}).grade()
    assert result.categories["webhook_setup"].score == 1.0
    assert "access_method.issued" in result.categories["webhook_setup"].evidence[0].message


def test_existing_route_is_not_new(make_app):
    routes = PRISTINE["src/routes/reservations.ts"] + (
        "router.get('/extra', (req, res) => { if (req.query.t === 'device.disconnected') res.send('x'); });\n"
    )
    pristine = {**PRISTINE, "src/routes/reservations.ts": routes}
    changed = routes.replace("res.send('x')", "res.send('y')")
    s = scores(make_app(pristine, {"src/routes/reservations.ts": changed}).grade())
    assert s["webhook_setup"] == 0.0


def test_tsx_and_object_methods(make_app):
    page = """
        import { Seam } from 'seam';
        const seam = new Seam();
        export const handlers = {
          async createReservation(r: any) {
            await seam.customers.pushData({ customer_key: 'p', reservations: [], user_identities: [] });
            return <div>{r.id}</div>;
          },
        };
    """
    key = AnswerKey(
        expected_calls={"create": ["customers.push_data"]},
        expected_placements={"customers.push_data": ["createReservation"]},
        required_parameters={"push_data": ["customer_key", "reservations", "user_identities"]},
    )
    s = scores(make_app({"src/page.tsx": "export const handlers = {};\n"}, {"src/page.tsx": page}).grade(key))
    assert s["integration_placement"] == 1.0
    assert s["api_correctness"] == 1.0


def test_payload_built_by_named_mapper_and_object_assign(make_app):
    service = """
        import { Seam } from 'seam';
        const seam = new Seam();
        function toSeamReservation(r: any) {
          return { reservation_key: r.id, space_keys: [r.unitId] };
        }
        export async function createReservation(rs: any[]) {
          const base = { customer_key: 'p' };
          const body = Object.assign({}, base, { user_identities: [], reservations: rs.map(toSeamReservation) });
          await seam.customers.pushData(body);
        }
    """  # noqa: E501 - code inside a string, kept as written
    key = AnswerKey(
        expected_calls={"create": ["customers.push_data"]},
        expected_placements={"customers.push_data": ["createReservation"]},
        required_parameters={
            "push_data": [
                "customer_key",
                "user_identities",
                "reservations[].space_keys",
                "reservations[].guest_key",
            ]
        },
    )
    result = make_app({"src/s.ts": "export {};\n"}, {"src/s.ts": service}).grade(key)
    assert result.categories["api_correctness"].score == 0.75
    assert "missing reservations[].guest_key" in result.categories["api_correctness"].evidence[0].message
