// Access-grant path, access-code path, errors, through the npm SDK.
const { Seam } = await import(process.env.SEAM_MODULE)
const http = await import(new URL('../@seamapi/http/index.js', process.env.SEAM_MODULE).href)
const seam = new Seam()
const out = {}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const until = async (fn, ms = 10000) => {
  const end = Date.now() + ms
  for (;;) { const v = await fn(); if (v) return v; if (Date.now() > end) throw new Error('timeout'); await sleep(50) }
}
const devices = await seam.devices.list({ device_type: 'yale_lock' })
out.yale_count = devices.length
const lock = devices[0]
// access grant
const ui = await seam.userIdentities.create({ full_name: 'Grace Hopper', email_address: 'grace@example.com', user_identity_key: 'grace' })
const grant = await seam.accessGrants.create({
  user_identity_id: ui.user_identity_id, device_ids: [lock.device_id],
  requested_access_methods: [{ mode: 'code' }], starts_at: '2031-01-01T00:00:00Z', ends_at: '2031-01-02T00:00:00Z',
})
out.grant = grant
const methods = await until(async () => {
  const m = await seam.accessMethods.list({ access_grant_id: grant.access_grant_id })
  return m.every((x) => x.is_issued) && m
})
out.methods = methods
out.grant_codes = await seam.accessCodes.list({ access_grant_id: grant.access_grant_id })
await seam.accessGrants.update({ access_grant_id: grant.access_grant_id, ends_at: '2031-01-03T00:00:00Z' })
out.grant_codes_updated = await seam.accessCodes.list({ access_grant_id: grant.access_grant_id })
await seam.accessGrants.delete({ access_grant_id: grant.access_grant_id })
out.grant_codes_gone = await until(async () => (await seam.accessCodes.list({ device_id: lock.device_id })).length === 0)
// access codes
const created = await seam.accessCodes.create({ device_id: lock.device_id, name: 'Cleaner', code: '482915' })
out.created = created
await until(async () => (await seam.accessCodes.get({ access_code_id: created.access_code_id })).status === 'set')
await seam.accessCodes.update({ access_code_id: created.access_code_id, name: 'Cleaner (new)', starts_at: '2031-02-01T00:00:00Z', ends_at: '2031-02-02T00:00:00Z' })
out.updated = await seam.accessCodes.get({ access_code_id: created.access_code_id })
out.listed = await seam.accessCodes.list({ device_id: lock.device_id })
await seam.accessCodes.delete({ access_code_id: created.access_code_id })
out.removing = (await seam.accessCodes.get({ access_code_id: created.access_code_id })).status
await until(async () => (await seam.accessCodes.list({ device_id: lock.device_id })).length === 0)
// errors
try { await seam.accessCodes.create({ device_id: 'not-a-uuid' }); out.invalid = 'no error' } catch (e) {
  out.invalid = { name: e.name, code: e.code, status: e.statusCode, request_id: e.requestId,
    is_invalid_input: http.isSeamHttpInvalidInputError(e), validation: e.getValidationErrorMessages('device_id') }
}
try { await seam.accessCodes.get({ access_code_id: '00000000-0000-4000-8000-000000000000' }) } catch (e) {
  out.not_found = { name: e.name, code: e.code, status: e.statusCode }
}
try { await new Seam({ apiKey: 'seam_test_not_a_real_key' }).devices.list() } catch (e) {
  out.unauthorized = { name: e.name, status: e.statusCode, is_unauthorized: http.isSeamHttpUnauthorizedError(e) }
}
console.log(JSON.stringify(out))
