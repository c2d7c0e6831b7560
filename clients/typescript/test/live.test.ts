// The package against a live server: the whole agent loop with one uploaded file, and a signed
// webhook delivery of that submission verified. Needs BOUNTYBOARD_BASE_URL, BOUNTYBOARD_API_KEY (a
// bot key with the worker scopes and webhooks:manage) and BOUNTYBOARD_TASK_ID (a published "fun"
// task); someone else reviews the submission (the Python test that runs this one accepts it).
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { test } from "node:test";
import {
  claimStatus, claimTask, createBountyboardClient, dataOf, missingScopes, submit, uploadFile, verifyWebhook,
  waitForReview, WebhookVerificationError,
} from "../src/index.js";

function setting(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`set ${name}: this test runs against a live server`);
  return value;
}

const client = createBountyboardClient({ baseUrl: setting("BOUNTYBOARD_BASE_URL"), apiKey: setting("BOUNTYBOARD_API_KEY") });
const TASK_ID = setting("BOUNTYBOARD_TASK_ID");
// A 1x1 PNG: fun tasks take images.
const PNG = Uint8Array.from(atob(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="), (c) => c.charCodeAt(0));

interface Delivery { headers: Record<string, string | string[] | undefined>; body: Uint8Array }

/** A webhook receiver on loopback that keeps every delivery, raw. */
async function receiver(): Promise<{ url: string; deliveries: Delivery[]; close: () => void }> {
  const deliveries: Delivery[] = [];
  const server = createServer((request, response) => {
    const chunks: Uint8Array[] = [];
    request.on("data", (chunk: Uint8Array) => chunks.push(chunk));
    request.on("end", () => {
      const body = new Uint8Array(chunks.reduce((size, chunk) => size + chunk.length, 0));
      chunks.reduce((offset, chunk) => { body.set(chunk, offset); return offset + chunk.length; }, 0);
      deliveries.push({ headers: request.headers, body });
      response.writeHead(204);
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  assert.ok(address !== null && typeof address === "object");
  return { url: `http://127.0.0.1:${address.port}/hook`, deliveries, close: () => server.close() };
}

async function eventually<T>(find: () => T | undefined, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = find();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`no ${what} within ${timeoutMs / 1000} s`);
    await new Promise<void>((resolve) => setTimeout(resolve, 100));
  }
}

test("claim, upload, submit and the review, with the submission's webhook verified", async () => {
  const hooks = await receiver();
  const webhook = dataOf(await client.POST("/v1/agent/webhooks", {
    body: { url: hooks.url, events: ["claim.submitted"], description: "TypeScript client test" },
  }));
  try {
    assert.deepEqual(await missingScopes(client), []);
    const claim = await claimTask(client, TASK_ID, crypto.randomUUID());
    assert.equal(claim.taskId, TASK_ID);
    assert.equal((await claimStatus(client, claim.claimId)).nextAction, "submit");

    const attachment = await uploadFile(client, claim.claimId, { fileName: "pixel.png", mimeType: "image/png", data: PNG });
    assert.deepEqual([attachment.type, attachment.fileName], ["image", "pixel.png"]);
    const body = { resultType: "text" as const, content: "A pixel, attached.", attachments: [attachment] };
    const key = crypto.randomUUID();
    const receipt = await submit(client, claim.claimId, body, key);
    // The same key again is the same submission, not a second one.
    assert.equal((await submit(client, claim.claimId, body, key)).submissionId, receipt.submissionId);
    console.log(`submitted ${receipt.submissionId} on claim ${claim.claimId}`);

    const final = await waitForReview(client, claim.claimId, { pollMs: 200, timeoutMs: 60_000 });
    assert.equal(final?.reviewState, "accepted");

    const delivery = await eventually(() => hooks.deliveries[0], "webhook delivery");
    const event = await verifyWebhook(webhook.secret, delivery.headers, delivery.body);
    assert.equal(event.type, "claim.submitted");
    assert.equal(event.data.claimId, claim.claimId);
    assert.equal(event.data.submissionId, receipt.submissionId);
    const tampered = new TextEncoder().encode(new TextDecoder().decode(delivery.body).replace(claim.claimId, "clm_other"));
    await assert.rejects(verifyWebhook(webhook.secret, delivery.headers, tampered), WebhookVerificationError);
  } finally {
    await client.DELETE("/v1/agent/webhooks/{id}", { params: { path: { id: webhook.id } } });
    hooks.close();
  }
});
