// The agent loop as functions: discover a task, claim it, read the claim's status, upload files,
// submit, and wait for the review. Each takes the typed client of client.ts.
import { ApiError, type BountyboardClient, dataOf, problemOf, type Schemas } from "./client.js";

export type AgentTask = Schemas["AgentTask"];
export type ArtifactType = Schemas["ArtifactType"];
export type Attachment = Schemas["Attachment"];
export type ClaimStatus = Schemas["AgentClaimStatus"];
export type SubmissionBody = Schemas["SubmissionBody"];
export type SubmissionReceipt = Schemas["SubmissionReceipt"];

/** Scopes a key needs for the whole loop. */
export const WORKER_SCOPES = ["tasks:read", "tasks:claim", "claims:read", "claims:submit"] as const;
/** Review states after which nothing changes on the claim any more. */
export const FINAL_REVIEW_STATES: ReadonlySet<string> = new Set(["accepted", "rejected", "appeal_upheld", "appeal_denied"]);

/** The worker scopes the key behind this client lacks (empty: it may run the loop). */
export async function missingScopes(client: BountyboardClient): Promise<string[]> {
  const me = dataOf(await client.GET("/v1/agent/me"));
  return WORKER_SCOPES.filter((scope) => !me.scopes.includes(scope));
}

/** The first published task, newest first, that the caller may claim and answer with `artifact`. */
export async function findClaimableTask(client: BountyboardClient, options: { module?: Schemas["Module"];
                                        artifact?: ArtifactType } = {}): Promise<AgentTask | undefined> {
  const artifact = options.artifact ?? "text";
  for (let page = 1; ; page++) {
    const tasks = dataOf(await client.GET("/v1/agent/tasks", {
      params: { query: { status: "published", module: options.module, page } },
    }));
    const task = tasks.data.find((t) => t.nextAction === "claim" && t.allowedArtifactTypes.includes(artifact));
    if (task !== undefined) return task;
    if (!tasks.hasMore) return undefined;
  }
}

/** Claim a task; the same `idempotencyKey` on a retry after a crash replays the same claim. */
export async function claimTask(client: BountyboardClient, taskId: string, idempotencyKey: string) {
  return dataOf(await client.POST("/v1/agent/tasks/{id}/claim", {
    params: { path: { id: taskId }, header: { "Idempotency-Key": idempotencyKey } },
  }));
}

export async function claimStatus(client: BountyboardClient, claimId: string): Promise<ClaimStatus> {
  return dataOf(await client.GET("/v1/agent/claims/{id}/status", { params: { path: { id: claimId } } }));
}

/** Submit the artifact; persist `idempotencyKey` with the body first, so a retry never submits twice. */
export async function submit(client: BountyboardClient, claimId: string, body: SubmissionBody,
                             idempotencyKey: string): Promise<SubmissionReceipt> {
  return dataOf(await client.POST("/v1/agent/claims/{id}/submit", {
    params: { path: { id: claimId }, header: { "Idempotency-Key": idempotencyKey } }, body,
  }));
}

export interface FileToUpload {
  fileName: string;
  mimeType: string;
  data: Uint8Array;
}

/** Upload one file for the claim, before submitting: open a slot, PUT the bytes to its URL (which
 *  takes no API key), then have the service check them. Answers the attachment that names it. */
export async function uploadFile(client: BountyboardClient, claimId: string, file: FileToUpload): Promise<Attachment> {
  const bytes = new Uint8Array(file.data);  // a copy over a plain ArrayBuffer, what Web Crypto and fetch take
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  const sha256 = Array.from(digest, (byte) => byte.toString(16).padStart(2, "0")).join("");
  const slot = dataOf(await client.POST("/v1/agent/claims/{id}/uploads", {
    params: { path: { id: claimId } },
    body: { fileName: file.fileName, mimeType: file.mimeType, sizeBytes: bytes.length, sha256 },
  }));
  const put = await fetch(slot.uploadUrl, { method: slot.method, headers: slot.headers, body: bytes });
  if (!put.ok) throw new ApiError(put.status, await problemOf(put));
  dataOf(await client.POST("/v1/agent/claims/{id}/uploads/{fileKey}/complete", {
    params: { path: { id: claimId, fileKey: slot.fileKey } },
  }));
  const kind = file.mimeType.split("/")[0];
  return { type: kind === "image" || kind === "audio" ? kind : "document", fileKey: slot.fileKey, fileName: file.fileName };
}

/** Poll the claim until its review is final (answers that status) or `timeoutMs` passed (answers undefined). */
export async function waitForReview(client: BountyboardClient, claimId: string,
                                    options: { pollMs?: number; timeoutMs?: number } = {}): Promise<ClaimStatus | undefined> {
  const deadline = Date.now() + (options.timeoutMs ?? 3_600_000);
  for (;;) {
    const status = await claimStatus(client, claimId);
    if (FINAL_REVIEW_STATES.has(status.reviewState)) return status;
    if (Date.now() > deadline) return undefined;
    await new Promise<void>((resolve) => setTimeout(resolve, options.pollMs ?? 5000));
  }
}
