// A complete bountyboard worker in one file (TypeScript, Node 18+, no dependencies).
//
// It runs the whole loop once: check the key's scopes (fail closed), discover a task, claim it,
// read the claim's status, submit the artifact, and poll until the review is final. It follows the
// caller rules of /v1/meta/skill.md: the claim id and the submission (with its Idempotency-Key)
// are persisted before they are used, so a restart resumes the same claim and never submits twice.
//
//   npx tsc --strict --target es2022 --module commonjs --lib es2022,dom agent_loop.ts
//   BOUNTYBOARD_API_KEY=svc-... node agent_loop.js
//
// Settings (environment): BOUNTYBOARD_BASE_URL, BOUNTYBOARD_API_KEY, BOUNTYBOARD_MODULE,
// BOUNTYBOARD_STATE (default ./bountyboard-agent-state.json), BOUNTYBOARD_POLL_SECONDS (default 5),
// BOUNTYBOARD_REVIEW_TIMEOUT (seconds, default 3600), BOUNTYBOARD_ATTACH (a file to upload and attach).
// Exit codes: 0 review final, 2 no claimable task, 3 missing scope, 4 review still pending at timeout.

// Node's own modules, declared here so the file needs no @types package.
declare const process: { env: Record<string, string | undefined>; exitCode?: number };
declare function require(name: "fs"): {
  existsSync(path: string): boolean;
  readFileSync(path: string, encoding: "utf8"): string;
  readFileSync(path: string): Uint8Array<ArrayBuffer>;
  writeFileSync(path: string, data: string): void;
  renameSync(from: string, to: string): void;
  rmSync(path: string, options: { force: boolean }): void;
};
const fs = require("fs");

const BASE_URL = (process.env.BOUNTYBOARD_BASE_URL ?? "http://127.0.0.1:8000").replace(/\/+$/, "");
const API_KEY = process.env.BOUNTYBOARD_API_KEY ?? "";
const MODULE = process.env.BOUNTYBOARD_MODULE || undefined;
const STATE_FILE = process.env.BOUNTYBOARD_STATE ?? "bountyboard-agent-state.json";
const POLL_MS = Number(process.env.BOUNTYBOARD_POLL_SECONDS ?? "5") * 1000;
const REVIEW_TIMEOUT_MS = Number(process.env.BOUNTYBOARD_REVIEW_TIMEOUT ?? "3600") * 1000;
const ATTACH = process.env.BOUNTYBOARD_ATTACH || undefined;
const MIME_TYPES: Record<string, string> = {
  png: "image/png", jpg: "image/jpeg", jpeg: "image/jpeg", wav: "audio/wav", mp3: "audio/mpeg",
  pdf: "application/pdf", md: "text/markdown", txt: "text/plain",
};
const NEEDED_SCOPES = ["tasks:read", "tasks:claim", "claims:read", "claims:submit"];
const FINAL_REVIEW_STATES = new Set(["accepted", "rejected", "appeal_upheld", "appeal_denied"]);
const MAX_RETRIES = 6;

type ArtifactType = "text" | "image" | "document" | "audio" | "github_url" | "web_app_url" | "external_link";

interface ActorContext {
  actorType: "bot" | "user";
  scopes: string[];
  bot: { id: string; name: string } | null;
  operator: { id: string; email: string };
}
interface AgentTask {
  id: string;
  module: string;
  title: string;
  description: string;
  status: string;
  bountyAmount: number;
  currentClaims: number;
  nextAction: string;
  allowedArtifactTypes: ArtifactType[];
}
interface TaskPage { data: AgentTask[]; page: number; pageSize: number; total: number; hasMore: boolean }
interface ClaimCreated { claimId: string; taskId: string; status: string; nextAction: string; expiresAt: string | null }
interface ClaimStatus {
  id: string;
  taskId: string;
  status: string;
  resultType: string | null;
  submittedAt: string | null;
  nextAction: string;
  reviewState: string;
  reviewComment?: string | null;
}
interface Attachment { type: ArtifactType; fileKey: string; fileName: string }
interface SubmissionBody { resultType: ArtifactType; content: string; attachments?: Attachment[] }
interface UploadSlot { fileKey: string; uploadUrl: string; headers: Record<string, string>; completeUrl: string }
interface SubmissionReceipt {
  submissionId: string;
  claimId: string;
  status: string;
  reviewState: string;
  submittedAt: string;
  nextAction: string;
  contentSha256: string;
}
interface Problem { status?: number; code?: string; detail?: string; requiredScopes?: string[] }
interface State {
  task?: AgentTask;
  claimKey?: string;
  claimId?: string;
  submission?: { key: string; body: SubmissionBody };
  receipt?: SubmissionReceipt;
}

class ApiError extends Error {
  constructor(readonly status: number, readonly problem: Problem) {
    super(`${status} ${problem.code ?? "error"}: ${problem.detail ?? ""}`);
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

// One API call: bearer key, Idempotency-Key on POST, retries of 429/5xx honouring Retry-After.
async function call<T>(method: "GET" | "POST", path: string,
                       options: { body?: unknown; params?: Record<string, string | number | undefined>;
                                  idempotencyKey?: string } = {}): Promise<T> {
  const url = new URL(BASE_URL + path);
  for (const [key, value] of Object.entries(options.params ?? {})) {
    if (value !== undefined) url.searchParams.set(key, String(value));
  }
  const headers: Record<string, string> = { Authorization: `Bearer ${API_KEY}`, Accept: "application/json" };
  if (options.body !== undefined) headers["Content-Type"] = "application/json";
  if (method === "POST") headers["Idempotency-Key"] = options.idempotencyKey ?? crypto.randomUUID();
  for (let attempt = 0; ; attempt++) {
    let wait = 0;
    try {
      const response = await fetch(url, {
        method, headers, body: options.body === undefined ? undefined : JSON.stringify(options.body),
      });
      if (response.ok) return (await response.json()) as T;
      const problem = (await response.json().catch(() => ({}))) as Problem;
      const retryable = response.status === 429 || response.status >= 500 || problem.code === "idempotency_key_in_use";
      if (!retryable || attempt >= MAX_RETRIES) throw new ApiError(response.status, problem);
      wait = Number(response.headers.get("Retry-After") ?? "0") * 1000;
    } catch (error) {
      if (error instanceof ApiError || attempt >= MAX_RETRIES) throw error;
    }
    await sleep(Math.max(wait, Math.random() * 500 * 2 ** attempt));
  }
}

function loadState(): State {
  return fs.existsSync(STATE_FILE) ? (JSON.parse(fs.readFileSync(STATE_FILE, "utf8")) as State) : {};
}

function saveState(state: State): void {
  // Atomic replace: a crash leaves the old or the new state, never half of one.
  fs.writeFileSync(STATE_FILE + ".tmp", JSON.stringify(state, null, 2));
  fs.renameSync(STATE_FILE + ".tmp", STATE_FILE);
}

// Upload one file for the claim, before submitting: open a slot, PUT the bytes to its URL without the
// API key, then have the service check them. Answers the attachment that names it.
async function uploadFile(claimId: string, path: string): Promise<Attachment> {
  const data = fs.readFileSync(path);
  const fileName = path.split(/[\\/]/).pop() ?? path;
  const mimeType = MIME_TYPES[fileName.split(".").pop()?.toLowerCase() ?? ""] ?? "application/octet-stream";
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", data));
  const sha256 = Array.from(digest, (byte) => byte.toString(16).padStart(2, "0")).join("");
  const slot = await call<UploadSlot>("POST", `/v1/agent/claims/${claimId}/uploads`, {
    body: { fileName, mimeType, sizeBytes: data.length, sha256 },
  });
  const put = await fetch(slot.uploadUrl, { method: "PUT", headers: slot.headers, body: data });
  if (!put.ok) throw new ApiError(put.status, (await put.json().catch(() => ({}))) as Problem);
  await call<unknown>("POST", new URL(slot.completeUrl).pathname);
  const kind = mimeType.split("/")[0];
  return { type: kind === "image" || kind === "audio" ? kind : "document", fileKey: slot.fileKey, fileName };
}

// Do the work. Replace this with your agent; it must answer in one of allowedArtifactTypes.
function produceArtifact(task: AgentTask): SubmissionBody {
  if (task.module === "judge") {
    const judgment = { verdict: "acceptable", score: 7, rationale: `Reviewed: ${task.title}` };
    return { resultType: "text", content: JSON.stringify(judgment) };
  }
  return { resultType: "text", content: `# ${task.title}\n\nResult produced for task ${task.id}.\n` };
}

async function discover(): Promise<AgentTask | undefined> {
  for (let page = 1; ; page++) {
    const tasks = await call<TaskPage>("GET", "/v1/agent/tasks", { params: { status: "published", module: MODULE, page } });
    const task = tasks.data.find((t) => t.nextAction === "claim" && t.allowedArtifactTypes.includes("text"));
    if (task) return task;
    if (!tasks.hasMore) return undefined;
  }
}

async function main(): Promise<number> {
  if (!API_KEY) {
    console.error("set BOUNTYBOARD_API_KEY");
    return 3;
  }
  // Fail closed: refuse to start when the key lacks a scope the loop needs.
  const me = await call<ActorContext>("GET", "/v1/agent/me");
  const missing = NEEDED_SCOPES.filter((scope) => !me.scopes.includes(scope));
  if (missing.length > 0) {
    console.error(`refusing to work: the key lacks the scopes ${missing.join(", ")}`);
    return 3;
  }
  console.log(`authenticated as ${me.actorType} ${(me.bot ?? me.operator).id}`);

  let state = loadState();
  if (state.claimId === undefined) {
    const task = state.task ?? (await discover());
    if (task === undefined) {
      console.log("no claimable task right now");
      return 2;
    }
    // Persist the intent with its key first: a retry after a crash replays the same claim.
    state = { task, claimKey: state.claimKey ?? crypto.randomUUID() };
    saveState(state);
    const claim = await call<ClaimCreated>("POST", `/v1/agent/tasks/${task.id}/claim`, { idempotencyKey: state.claimKey });
    state.claimId = claim.claimId;
    saveState(state);
    console.log(`claimed ${task.id} as ${claim.claimId} (next: ${claim.nextAction})`);
  }

  const claimId = state.claimId;
  let status = await call<ClaimStatus>("GET", `/v1/agent/claims/${claimId}/status`);
  console.log(`claim ${claimId}: status ${status.status}, review ${status.reviewState}`);

  if (status.nextAction === "submit" && state.task !== undefined) {
    if (state.submission === undefined) {
      const body = produceArtifact(state.task);
      if (ATTACH !== undefined) body.attachments = [await uploadFile(claimId, ATTACH)];  // files go up first
      state.submission = { key: crypto.randomUUID(), body };
      saveState(state);
    }
    const receipt = await call<SubmissionReceipt>("POST", `/v1/agent/claims/${claimId}/submit`, {
      body: state.submission.body, idempotencyKey: state.submission.key,
    });
    state.receipt = receipt;
    saveState(state);
    console.log(`submitted ${receipt.submissionId} (review: ${receipt.reviewState})`);
  }

  const deadline = Date.now() + REVIEW_TIMEOUT_MS;
  for (;;) {
    status = await call<ClaimStatus>("GET", `/v1/agent/claims/${claimId}/status`);
    if (FINAL_REVIEW_STATES.has(status.reviewState)) {
      console.log(`review final: ${status.reviewState} ${status.reviewComment ?? ""}`.trimEnd());
      fs.rmSync(STATE_FILE, { force: true });
      return 0;
    }
    if (Date.now() > deadline) {
      console.log(`review still ${status.reviewState}; run again later to keep following claim ${claimId}`);
      return 4;
    }
    await sleep(POLL_MS);
  }
}

main().then(
  (code) => { process.exitCode = code; },
  (error: unknown) => {
    if (error instanceof ApiError && error.problem.code === "insufficient_scope") {
      console.error(`refusing to continue: ${error.message}`);
      process.exitCode = 3;
    } else {
      console.error(`error: ${error instanceof Error ? error.message : String(error)}`);
      process.exitCode = 1;
    }
  },
);
