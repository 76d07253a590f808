// The emulator's route families through the npm SDK (its own HTTP methods: GET/DELETE with query strings,
// PUT/PATCH where the spec has them), configured only by SEAM_ENDPOINT / SEAM_API_KEY.
const { Seam } = await import(process.env.SEAM_MODULE)
const seam = new Seam()
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const out = {}
const devices = await seam.devices.list()
const ids = ['FRONT DOOR', 'Front Door'].map((name) => devices.find((d) => d.properties.name === name).device_id)
const codes = await seam.accessCodes.createMultiple({
  device_ids: ids, starts_at: '2031-05-01T15:00:00Z', ends_at: '2031-05-04T11:00:00Z',
})
out.multi = codes.map((c) => ({ device_id: c.device_id, code: c.code, common_code_key: c.common_code_key }))
await seam.accessCodes.updateMultiple({ common_code_key: codes[0].common_code_key, ends_at: '2031-05-06T11:00:00Z' })
out.multi_ends = (await seam.accessCodes.list({ access_code_ids: codes.map((c) => c.access_code_id) }))
  .map((c) => c.ends_at)

let webview = await seam.connectWebviews.create({ accepted_providers: ['nuki'] })
out.webview_created = webview.status
while (webview.status !== 'authorized') {
  await sleep(100)
  webview = await seam.connectWebviews.get({ connect_webview_id: webview.connect_webview_id })
}
out.webview_devices = (await seam.devices.list({ connected_account_id: webview.connected_account_id }))
  .map((d) => d.device_type)
await seam.devices.update({ device_id: ids[0], name: 'Front (renamed)' })
out.renamed = (await seam.devices.get({ device_id: ids[0] })).display_name
const session = await seam.clientSessions.create({ connected_account_ids: [webview.connected_account_id] })
out.session_devices = session.device_count

const [system] = await seam.acs.systems.list()
const entrances = await seam.acs.entrances.list({ acs_system_id: system.acs_system_id })
const user = await seam.acs.users.create({ acs_system_id: system.acs_system_id, full_name: 'Ada Guest' })
const credential = await seam.acs.credentials.create({
  acs_user_id: user.acs_user_id, access_method: 'code', code: '246810',
  allowed_acs_entrance_ids: [entrances[0].acs_entrance_id],
})
out.credentials = (await seam.acs.credentials.list({ acs_user_id: user.acs_user_id })).map((c) => c.code)
out.reach = (await seam.acs.users.listAccessibleEntrances({ acs_user_id: user.acs_user_id })).map((e) => e.display_name)
await seam.acs.credentials.delete({ acs_credential_id: credential.acs_credential_id })
await seam.acs.users.delete({ acs_user_id: user.acs_user_id })
out.users_left = (await seam.acs.users.list({ acs_system_id: system.acs_system_id })).length
await seam.connectedAccounts.delete({ connected_account_id: webview.connected_account_id })
out.accounts = (await seam.connectedAccounts.list()).map((a) => a.account_type).sort()
console.log(JSON.stringify(out))
