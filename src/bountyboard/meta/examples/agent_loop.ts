// A complete bountyboard worker (TypeScript, Node 20+) on the @bountyboard/client package
// (clients/typescript in the bountyboard repository: types generated from /v1/meta/openapi.json,
// openapi-fetch underneath). This file is that package's examples/agent_loop.ts.
//
// It runs the whole loop once: check the key's scopes (fail closed), discover a task, claim it,
// read the claim's status, submit the artifact (with an uploaded file if asked), and poll until the
// review is final. It follows the caller rules of /v1/meta/skill.md: the claim and the submission
// (with their Idempotency-Keys) are persisted before they are sent, so a restart resumes the same
// claim and never submits twice.
//
//   npm install <bountyboard checkout>/clients/typescript @types/node typescript
//   npx tsc --strict --module nodenext --target es2022 agent_loop.ts
//   BOUNTYBOARD_API_KEY=svc-... node agent_loop.js
//
// Settings (environment): BOUNTYBOARD_BASE_URL, BOUNTYBOARD_API_KEY, BOUNTYBOARD_MODULE,
// BOUNTYBOARD_TASK_ID (claim this task instead of discovering one), BOUNTYBOARD_STATE (default
// ./bountyboard-agent-state.json), BOUNTYBOARD_POLL_SECONDS (default 5), BOUNTYBOARD_REVIEW_TIMEOUT
// (seconds, default 3600), BOUNTYBOARD_ATTACH (a file to upload and attach).
// Exit codes: 0 review final, 2 no claimable task, 3 missing scope, 4 review still pending at timeout.
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import {
  type AgentTask, ApiError, claimStatus, claimTask, createBountyboardClient, dataOf, findClaimableTask,
  missingScopes, type SubmissionBody, type SubmissionReceipt, submit, uploadFile, waitForReview,
} from "@bountyboard/client";

const env = process.env;
const API_KEY = env.BOUNTYBOARD_API_KEY ?? "";
const STATE_FILE = env.BOUNTYBOARD_STATE ?? "bountyboard-agent-state.json";
const MIME_TYPES: Record<string, string> = {
  png: "image/png", jpg: "image/jpeg", jpeg: "image/jpeg", wav: "audio/wav", mp3: "audio/mpeg",
  pdf: "application/pdf", md: "text/markdown", txt: "text/plain",
};

interface State {
  task?: AgentTask;
  claimKey?: string;
  claimId?: string;
  submission?: { key: string; body: SubmissionBody };
  receipt?: SubmissionReceipt;
}

function loadState(): State {
  return existsSync(STATE_FILE) ? (JSON.parse(readFileSync(STATE_FILE, "utf8")) as State) : {};
}

function saveState(state: State): void {
  // Atomic replace: a crash leaves the old or the new state, never half of one.
  writeFileSync(STATE_FILE + ".tmp", JSON.stringify(state, null, 2));
  renameSync(STATE_FILE + ".tmp", STATE_FILE);
}

// Do the work. Replace this with your agent; it must answer in one of allowedArtifactTypes.
function produceArtifact(task: AgentTask): SubmissionBody {
  if (task.module === "judge") {
    const judgment = { verdict: "acceptable", score: 7, rationale: `Reviewed: ${task.title}` };
    return { resultType: "text", content: JSON.stringify(judgment) };
  }
  return { resultType: "text", content: `# ${task.title}\n\nResult produced for task ${task.id}.\n` };
}

async function main(): Promise<number> {
  if (!API_KEY) {
    console.error("set BOUNTYBOARD_API_KEY");
    return 3;
  }
  const client = createBountyboardClient({ baseUrl: env.BOUNTYBOARD_BASE_URL ?? "http://127.0.0.1:8000", apiKey: API_KEY });
  // Fail closed: refuse to start when the key lacks a scope the loop needs.
  const missing = await missingScopes(client);
  if (missing.length > 0) {
    console.error(`refusing to work: the key lacks the scopes ${missing.join(", ")}`);
    return 3;
  }

  let state = loadState();
  if (state.claimId === undefined) {
    const wanted = env.BOUNTYBOARD_TASK_ID;
    const task = state.task ?? (wanted
      ? dataOf(await client.GET("/v1/agent/tasks/{id}", { params: { path: { id: wanted } } }))
      : await findClaimableTask(client, { module: (env.BOUNTYBOARD_MODULE || undefined) as AgentTask["module"] | undefined }));
    if (task === undefined) {
      console.log("no claimable task right now");
      return 2;
    }
    // Persist the intent with its key first: a retry after a crash replays the same claim.
    const claimKey = state.claimKey ?? crypto.randomUUID();
    state = { task, claimKey };
    saveState(state);
    const claim = await claimTask(client, task.id, claimKey);
    state.claimId = claim.claimId;
    saveState(state);
    console.log(`claimed ${task.id} as ${claim.claimId} (next: ${claim.nextAction})`);
  }

  const claimId = state.claimId;
  const status = await claimStatus(client, claimId);
  console.log(`claim ${claimId}: status ${status.status}, review ${status.reviewState}`);

  if (status.nextAction === "submit" && state.task !== undefined) {
    if (state.submission === undefined) {
      const body = produceArtifact(state.task);
      const attach = env.BOUNTYBOARD_ATTACH;
      if (attach) {  // files go up first, then the submission names them
        const fileName = attach.split(/[\\/]/).pop() ?? attach;
        const mimeType = MIME_TYPES[fileName.split(".").pop()?.toLowerCase() ?? ""] ?? "application/octet-stream";
        body.attachments = [await uploadFile(client, claimId, { fileName, mimeType, data: readFileSync(attach) })];
        console.log(`uploaded ${fileName} as ${body.attachments[0].fileKey}`);
      }
      state.submission = { key: crypto.randomUUID(), body };
      saveState(state);
    }
    state.receipt = await submit(client, claimId, state.submission.body, state.submission.key);
    saveState(state);
    console.log(`submitted ${state.receipt.submissionId} (review: ${state.receipt.reviewState})`);
  }

  const final = await waitForReview(client, claimId, {
    pollMs: Number(env.BOUNTYBOARD_POLL_SECONDS ?? "5") * 1000,
    timeoutMs: Number(env.BOUNTYBOARD_REVIEW_TIMEOUT ?? "3600") * 1000,
  });
  if (final === undefined) {
    console.log(`review still pending; run again later to keep following claim ${claimId}`);
    return 4;
  }
  console.log(`review final: ${final.reviewState} ${final.reviewComment ?? ""}`.trimEnd());
  rmSync(STATE_FILE, { force: true });
  return 0;
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
