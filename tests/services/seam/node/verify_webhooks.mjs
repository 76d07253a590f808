// Verify recorded deliveries with the official npm verifier. Input: JSON file {secret, deliveries:[{body, headers}]}.
const { readFileSync } = await import('node:fs')
const { SeamWebhook } = await import(process.env.SEAM_WEBHOOK_MODULE)
const { secret, deliveries } = JSON.parse(readFileSync(process.env.DELIVERIES_FILE, 'utf8'))
const webhook = new SeamWebhook(secret)
const out = { verified: [], rejected: 0 }
for (const d of deliveries) out.verified.push(webhook.verify(d.body, d.headers).event_type)
try { new SeamWebhook(secret).verify(deliveries[0].body.replace('event', 'evant'), deliveries[0].headers) } catch (e) { out.rejected += 1 }
console.log(JSON.stringify(out))
