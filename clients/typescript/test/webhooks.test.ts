// Webhook verification on its own: the Standard Webhooks test vector, and what must be refused.
import assert from "node:assert/strict";
import { test } from "node:test";
import { verifyWebhook, WebhookVerificationError } from "../src/index.js";

// The example of the Standard Webhooks specification's reference libraries.
const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const BODY = '{"test": 2432232314}';
const HEADERS = {
  "webhook-id": "msg_p5jXN8AQM9LWM0D4loKWxJek",
  "webhook-timestamp": "1614265330",
  "webhook-signature": "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
};
const SENT = new Date(1614265330 * 1000);

test("the specification's example verifies, from a record or a Headers object", async () => {
  assert.deepEqual(await verifyWebhook(SECRET, HEADERS, BODY, { now: SENT }), { test: 2432232314 });
  assert.deepEqual(await verifyWebhook(SECRET, new Headers(HEADERS), new TextEncoder().encode(BODY), { now: SENT }),
                   { test: 2432232314 });
});

test("a rotation's second signature verifies too", async () => {
  const both = { ...HEADERS, "webhook-signature": `v1,bm90IHRoaXMgb25l ${HEADERS["webhook-signature"]}` };
  assert.deepEqual(await verifyWebhook(SECRET, both, BODY, { now: SENT }), { test: 2432232314 });
});

test("a changed body, id, secret or signature, or an old timestamp, is refused", async () => {
  const refused = (promise: Promise<unknown>) => assert.rejects(promise, WebhookVerificationError);
  await refused(verifyWebhook(SECRET, HEADERS, BODY.replace("2432232314", "2432232315"), { now: SENT }));
  await refused(verifyWebhook(SECRET, { ...HEADERS, "webhook-id": "msg_other" }, BODY, { now: SENT }));
  await refused(verifyWebhook("whsec_" + btoa("another secret of 32 bytes ....."), HEADERS, BODY, { now: SENT }));
  await refused(verifyWebhook(SECRET, { ...HEADERS, "webhook-signature": "v1,not base64!" }, BODY, { now: SENT }));
  await refused(verifyWebhook(SECRET, { ...HEADERS, "webhook-signature": "v2,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=" },
                              BODY, { now: SENT }));
  await refused(verifyWebhook(SECRET, HEADERS, BODY, { now: new Date((1614265330 + 301) * 1000) }));
  const { "webhook-signature": _, ...unsigned } = HEADERS;
  await refused(verifyWebhook(SECRET, unsigned, BODY, { now: SENT }));
});
