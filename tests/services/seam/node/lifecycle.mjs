// Reservation automations through the npm SDK, configured only by SEAM_ENDPOINT / SEAM_API_KEY.
// The emulator's /_emulator/wait replaces polling (its URL is SEAM_ENDPOINT + /_emulator/wait); like every control
// route it needs the emulator's admin credential (EMULATOR_ADMIN), which only the harness holds.
const { Seam } = await import(process.env.SEAM_MODULE)
const seam = new Seam()
const endpoint = process.env.SEAM_ENDPOINT
const wait = async (condition, timeout = 20) => {
  const res = await fetch(`${endpoint}/_emulator/wait`, {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: process.env.EMULATOR_ADMIN },
    body: JSON.stringify({ workspace_id: process.env.WORKSPACE_ID, timeout, condition }),
  })
  if (!res.ok) throw new Error(`wait failed: ${res.status} ${await res.text()}`)
  return (await res.json()).matched
}
const out = {}
const devices = await seam.devices.list()
out.device_types = devices.map((d) => d.device_type)
const front = devices.find((d) => d.properties.name === 'FRONT DOOR')
const space = await seam.spaces.create({ name: 'Unit 7', space_key: 'unit-7' })
await seam.spaces.addDevices({ space_id: space.space_id, device_ids: [front.device_id] })
await seam.customers.pushData({
  customer_key: 'cust-js',
  user_identities: [{ user_identity_key: 'guest-js', name: 'Ada Guest', email_address: 'ada@example.com' }],
  reservations: [{ reservation_key: 'res-js', user_identity_key: 'guest-js', space_keys: ['unit-7'],
    starts_at: '2031-05-01T15:00:00Z', ends_at: '2031-05-04T11:00:00Z' }],
})
const setCodes = await wait({ resource: 'access_codes', where: { device_id: front.device_id, reservation_key: 'res-js', status: 'set' } })
out.set_code = setCodes[0]
await seam.customers.pushData({
  customer_key: 'cust-js',
  reservations: [{ reservation_key: 'res-js', user_identity_key: 'guest-js', space_keys: ['unit-7'],
    starts_at: '2031-05-01T15:00:00Z', ends_at: '2031-05-06T11:00:00Z' }],
})
out.after_update = await seam.accessCodes.list({ device_id: front.device_id })
await wait({ resource: 'access_codes', where: { device_id: front.device_id, status: 'set', ends_at: '2031-05-06T11:00:00.000Z' } })
const grants = await seam.accessGrants.list({ reservation_key: 'res-js' })
out.grant = grants[0]
await seam.customers.deleteData({ reservation_keys: ['res-js'] })
await wait({ resource: 'access_codes', where: { device_id: front.device_id }, absent: true })
out.after_delete = await seam.accessCodes.list({ device_id: front.device_id })
const events = await seam.events.list({ since: '2000-01-01T00:00:00Z' })
out.event_types = events.map((e) => e.event_type)
console.log(JSON.stringify(out))
