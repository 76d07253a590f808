"""Labelled cases in styles the shipped TypeScript fixtures do not use, each scored category by category: a
class service with its Seam gateway injected through the constructor, routers mounted from other modules
(`app.use` with an imported router, a `require`d one, a nested router), handlers whose names name no phase,
payloads built in variables, raw HTTP (fetch with a template literal, an axios instance with a base URL,
got, node's https with `req.write`, a wrapper taking the route), and the ways code can look integrated
without running."""

from __future__ import annotations

from textwrap import dedent

import pytest
from rubric_helpers import ENDPOINTS, App, scores

from skillassay.seam.plan import AnswerKey

INDEX = dedent("""
    import express from 'express';
    import api from './http/api';

    const app = express();
    app.use(express.json());
    app.use('/api', api);
    app.listen(Number(process.env.PORT) || 3000);
""")
API = dedent("""
    import { Router } from 'express';
    import stays from './stays';

    const api = Router();
    api.use('/reservations', stays);
    export default api;
""")
STAY_ROUTES = dedent("""
    import { Router } from 'express';
    import { stayService } from '../domain/container';

    const router = Router();

    router.post('/', async (req, res) => {
      res.status(201).json({ reservation: await stayService.book(req.body) });
    });

    router.put('/:id', async (req, res) => {
      res.json({ reservation: await stayService.amend(req.params.id, req.body) });
    });

    router.delete('/:id', async (req, res) => {
      res.json({ reservation: await stayService.release(req.params.id) });
    });

    export default router;
""")
SERVICE = dedent("""
    export interface Stay { id: string; guest: string; unit: string; property: string; start: string; end: string }

    export class StayService {
      private stays = new Map<string, Stay>();

      async book(input: Stay): Promise<Stay> {
        this.stays.set(input.id, input);
        return input;
      }

      async amend(id: string, input: Partial<Stay>): Promise<Stay> {
        const stay = { ...this.stays.get(id)!, ...input };
        this.stays.set(id, stay);
        return stay;
      }

      async release(id: string): Promise<Stay> {
        const stay = this.stays.get(id)!;
        this.stays.delete(id);
        return stay;
      }
    }
""")  # noqa: E501 - code inside a string, kept as written
CONTAINER = dedent("""
    import { StayService } from './stayService';

    export const stayService = new StayService();
""")
PRISTINE = {
    "src/index.ts": INDEX,
    "src/http/api.ts": API,
    "src/http/stays.ts": STAY_ROUTES,
    "src/domain/stayService.ts": SERVICE,
    "src/domain/container.ts": CONTAINER,
}

KEY = AnswerKey(
    expected_files_modified=["src/domain/stayService.ts"],
    expected_new_files_allowed=["src/seam/"],
    expected_calls={
        "create": ["customers.push_data"],
        "update": ["customers.push_data"],
        "cancel": ["customers.delete_data"],
    },
    expected_placements={"customers.push_data": ["book", "amend"], "customers.delete_data": ["release"]},
    required_parameters={
        "push_data": ["customer_key", "reservations", "user_identities"],
        "delete_data": ["reservation_keys"],
    },
)
FULL = {
    "api_path_selection": 1.0,
    "file_targeting": 1.0,
    "integration_placement": 1.0,
    "api_correctness": 1.0,
    "lifecycle_completeness": 1.0,
    "webhook_setup": 0.0,
}

GATEWAY = dedent("""
    import { Seam } from 'seam';
    import type { Stay } from '../domain/stayService';

    export class SeamGateway {
      constructor(private readonly client: Seam) {}

      async publish(stay: Stay): Promise<void> {
        const payload: Record<string, unknown> = { customer_key: stay.property };
        payload.user_identities = [{ user_identity_key: stay.guest, name: stay.guest }];
        const reservation = { reservation_key: stay.id, user_identity_key: stay.guest, space_keys: [stay.unit] };
        await this.client.customers.pushData({ ...payload, reservations: [reservation] } as any);
      }

      async retract(id: string): Promise<void> {
        await this.client.customers.deleteData({ reservation_keys: [id] });
      }
    }
""")  # noqa: E501 - code inside a string, kept as written
SERVICE_WITH_GATEWAY = (
    SERVICE.replace(
        "export class StayService {\n  private stays = new Map<string, Stay>();\n",
        "import type { SeamGateway } from '../seam/gateway';\n\nexport class StayService {\n"
        "  private stays = new Map<string, Stay>();\n\n  constructor(private readonly seam: SeamGateway) "
        "{}\n",
    )
    .replace(
        "    this.stays.set(input.id, input);\n    return input;",
        "    this.stays.set(input.id, input);\n    await this.seam.publish(input);\n    return input;",
    )
    .replace(
        "    this.stays.set(id, stay);\n    return stay;",
        "    this.stays.set(id, stay);\n    await this.seam.publish(stay);\n    return stay;",
    )
    .replace(
        "    this.stays.delete(id);\n    return stay;",
        "    this.stays.delete(id);\n    await this.seam.retract(id);\n    return stay;",
    )
)
CONTAINER_WITH_GATEWAY = dedent("""
    import { Seam } from 'seam';
    import { SeamGateway } from '../seam/gateway';
    import { StayService } from './stayService';

    export const stayService = new StayService(new SeamGateway(new Seam()));
""")


def _grade(tmp_path, files: dict[str, str], key: AnswerKey = KEY):
    return App(tmp_path, PRISTINE, files).grade(key, endpoints=ENDPOINTS)


def test_constructor_injected_gateway_through_nested_mounted_routers(tmp_path):
    assert "await this.seam.publish(input)" in SERVICE_WITH_GATEWAY
    result = _grade(
        tmp_path,
        {
            "src/seam/gateway.ts": GATEWAY,
            "src/domain/stayService.ts": SERVICE_WITH_GATEWAY,
            "src/domain/container.ts": CONTAINER_WITH_GATEWAY,
        },
    )
    assert scores(result) == FULL  # editing container.ts too costs nothing: only unexpected new files do
    lifecycle = [e.message for e in result.categories["lifecycle_completeness"].evidence]
    assert any(
        "update: customers.push_data reached from PUT /api/reservations/{{RESERVATION_ID}} "
        "(src/http/stays.ts:10)"
        in m
        and "StayService.amend -> SeamGateway.publish" in m
        for m in lifecycle
    ), lifecycle


def test_only_create_integrated_scores_one_phase(tmp_path):
    service = SERVICE_WITH_GATEWAY.replace("    await this.seam.publish(stay);\n", "").replace(
        "    await this.seam.retract(id);\n", ""
    )
    s = scores(
        _grade(
            tmp_path,
            {
                "src/seam/gateway.ts": GATEWAY,
                "src/domain/stayService.ts": service,
                "src/domain/container.ts": CONTAINER_WITH_GATEWAY,
            },
        )
    )
    assert s["lifecycle_completeness"] == 0.33 and s["integration_placement"] == 0.33


def test_a_push_to_arrays_or_maps_is_never_taken_for_the_apps_publish(tmp_path):
    """`list.push(x)`, `map.set(...)`, `res.json(...)`: names of built-in methods on receivers nothing is
    known about do not lead to the app's functions of the same name."""
    gateway = GATEWAY.replace("async publish(", "async push(")
    service = (
        SERVICE_WITH_GATEWAY.replace("this.seam.publish(input)", "this.seam.push(input)")
        .replace("    await this.seam.publish(stay);\n", "    const log: Stay[] = [];\n    log.push(stay);\n")
        .replace("    await this.seam.retract(id);\n", "")
    )
    s = scores(
        _grade(
            tmp_path,
            {
                "src/seam/gateway.ts": gateway,
                "src/domain/stayService.ts": service,
                "src/domain/container.ts": CONTAINER_WITH_GATEWAY,
            },
        )
    )
    assert s["lifecycle_completeness"] == 0.33


@pytest.mark.parametrize(
    "dead", ["if_false", "and_false", "after_return", "nested_unused", "module_unused", "ternary_false"]
)
def test_code_that_never_runs_never_counts(tmp_path, dead):
    call = (
        "await getSeam().customers.pushData({ customer_key: s.property, reservations: [], "
        "user_identities: [] });"
    )
    body = {
        "if_false": f"if (false) {{\n      {call}\n    }}",
        "and_false": f"false && (async () => {{ {call} }})();",
        "after_return": f"return input;\n    {call}",
        "nested_unused": f"const later = async () => {{ {call} }};",
        "module_unused": "",
        "ternary_false": f"const r = false ? {call.removeprefix('await ').rstrip(';')} : undefined;",
    }[dead]
    service = SERVICE.replace(
        "export class StayService {",
        "import { Seam } from 'seam';\n\nconst getSeam = () => new Seam();\n\nexport class StayService {",
    )
    service = service.replace(
        "    this.stays.set(input.id, input);\n    return input;",
        f"    this.stays.set(input.id, input);\n    const s = input;\n    {body}\n    return input;",
    )
    if dead == "module_unused":
        service += f"\nasync function syncLater(s: Stay) {{\n  {call}\n}}\n"
    result = _grade(tmp_path, {"src/domain/stayService.ts": service})
    s = scores(result)
    assert s["integration_placement"] == 0.0 and s["lifecycle_completeness"] == 0.0, dead
    assert s["api_path_selection"] == 0.0, dead  # the only push_data never runs: no path taken
    notes = [e.message for e in result.categories["api_path_selection"].evidence]
    assert any("never runs" in n for n in notes), notes


# ----------------------------------------------------------------------------- raw HTTP
RAW_VARIANTS = {
    "fetch_template": """
        const SEAM_URL = process.env.SEAM_ENDPOINT ?? 'https://connect.getseam.com';
        export async function seamCall(route: string, body: unknown): Promise<any> {
          const response = await fetch(`${SEAM_URL}${route}`, {
            method: 'POST',
            headers: { authorization: `Bearer ${process.env.SEAM_API_KEY}`, 'content-type': 'application/json' },
            body: JSON.stringify(body),
          });
          if (!response.ok) throw new Error(`seam ${route}: ${response.status}`);
          return response.json();
        }
        export const publish = (stay: any) => seamCall('/customers/push_data', {
          customer_key: stay.property,
          user_identities: [{ user_identity_key: stay.guest }],
          reservations: [{ reservation_key: stay.id, space_keys: [stay.unit] }],
        });
        export const retract = (id: string) => seamCall('/customers/delete_data', { reservation_keys: [id] });
    """,  # noqa: E501 - code inside a string, kept as written
    "axios_instance": """
        import axios from 'axios';
        const seam = axios.create({ baseURL: process.env.SEAM_ENDPOINT || 'https://connect.getseam.com' });
        export async function publish(stay: any) {
          const data = { customer_key: stay.property, user_identities: [], reservations: [] as unknown[] };
          data.reservations.push({ reservation_key: stay.id, space_keys: [stay.unit] });
          await seam.post('/customers/push_data', data);
        }
        export async function retract(id: string) {
          await seam.delete('/customers/delete_data', { params: { reservation_keys: [id] } });
        }
    """,
    "got_json": """
        import got from 'got';
        const base = 'https://connect.getseam.com';
        export async function publish(stay: any) {
          await got.post(base + '/customers/push_data', {
            json: { customer_key: stay.property, user_identities: [], reservations: [] },
          });
        }
        export async function retract(id: string) {
          await got(`${base}/customers/delete_data`, { method: 'POST', json: { reservation_keys: [id] } });
        }
    """,
    "node_https": """
        import https from 'node:https';
        function send(path: string, payload: object): Promise<void> {
          return new Promise((resolve, reject) => {
            const req = https.request({ hostname: 'connect.getseam.com', path, method: 'POST' }, () => resolve());
            req.on('error', reject);
            req.write(JSON.stringify(payload));
            req.end();
          });
        }
        export const publish = (stay: any) =>
          send('/customers/push_data', { customer_key: stay.property, user_identities: [], reservations: [] });
        export const retract = (id: string) => send('/customers/delete_data', { reservation_keys: [id] });
    """,  # noqa: E501 - code inside a string, kept as written
    "undici_request": """
        import { request } from 'undici';
        const SEAM = 'https://connect.getseam.com';
        const post = (route: string, payload: object) =>
          request(`${SEAM}${route}`, { method: 'POST', body: JSON.stringify(payload) });
        export async function publish(stay: any) {
          await post('/customers/push_data', { customer_key: stay.property, user_identities: [], reservations: [] });
        }
        export async function retract(id: string) {
          await post('/customers/delete_data', { reservation_keys: [id] });
        }
    """,  # noqa: E501 - code inside a string, kept as written
    "fetch_query_delete": """
        export async function publish(stay: any) {
          await fetch(new URL('/customers/push_data', process.env.SEAM_ENDPOINT), {
            method: 'POST',
            body: JSON.stringify({ customer_key: stay.property, user_identities: [], reservations: [] }),
          });
        }
        export async function retract(id: string) {
          const q = new URLSearchParams({ reservation_keys: id });
          await fetch(`https://connect.getseam.com/customers/delete_data?${q}`, { method: 'DELETE' });
        }
    """,
}


@pytest.mark.parametrize("variant", sorted(RAW_VARIANTS))
def test_raw_http_integrations_score_like_the_sdk(tmp_path, variant):
    service = SERVICE.replace(
        "export class StayService {",
        "import { publish, retract } from '../seam/http';\n\nexport class StayService {",
    )
    service = service.replace(
        "    this.stays.set(input.id, input);\n    return input;",
        "    this.stays.set(input.id, input);\n    await publish(input);\n    return input;",
    )
    service = service.replace(
        "    this.stays.set(id, stay);\n    return stay;",
        "    this.stays.set(id, stay);\n    await publish(stay);\n    return stay;",
    )
    service = service.replace(
        "    this.stays.delete(id);\n    return stay;",
        "    this.stays.delete(id);\n    await retract(id);\n    return stay;",
    )
    result = _grade(
        tmp_path, {"src/seam/http.ts": dedent(RAW_VARIANTS[variant]), "src/domain/stayService.ts": service}
    )
    assert scores(result) == FULL, [
        (c, e.message) for c, v in result.categories.items() for e in v.evidence if not e.ok
    ]


def test_raw_http_to_a_route_seam_does_not_have_is_no_call(tmp_path):
    service = SERVICE.replace(
        "    this.stays.set(input.id, input);\n    return input;",
        "    this.stays.set(input.id, input);\n"
        "    await fetch('https://connect.getseam.com/customers/push', { method: 'POST' });\n"
        "    await fetch('https://example.com/customers/push_data', { method: 'POST' });\n"
        "    return input;",
    )
    assert scores(_grade(tmp_path, {"src/domain/stayService.ts": service}))["api_path_selection"] == 0.0


# ----------------------------------------------------------------------------- routes and mounts
def test_express_mount_prefixes_name_new_routes_and_unchanged_routers_are_not_new(tmp_path):
    hooks = dedent("""
        import { Router } from 'express';
        const hooks = Router();
        hooks.post('/seam', (req, res) => {
          switch (req.body.event_type) {
            case 'access_code.set_on_device':
            case 'device.disconnected':
              break;
          }
          res.sendStatus(204);
        });
        module.exports = hooks;
    """)
    index = INDEX.replace(
        "app.use('/api', api);", "app.use('/api', api);\napp.use('/hooks', require('./http/hooks'));"
    )
    result = _grade(tmp_path, {"src/http/hooks.ts": hooks, "src/index.ts": index})
    webhook = result.categories["webhook_setup"]
    assert webhook.score == 1.0
    assert webhook.evidence[0].message.startswith("new route POST /hooks/seam handles Seam events")
    # the pristine app against itself: its routes (mounted under /api/reservations) are not new
    assert App(tmp_path / "self", PRISTINE, {}).grade(KEY, endpoints=ENDPOINTS).total == 0.0
