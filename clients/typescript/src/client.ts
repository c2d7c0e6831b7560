// The typed HTTP client: openapi-fetch over the paths generated from /v1/meta/openapi.json, with the
// caller rules of /v1/meta/skill.md built in (bearer key, an Idempotency-Key on every POST, retries of
// 429 and 5xx that honour Retry-After).
import createClient, { type Client } from "openapi-fetch";
import type { components, paths } from "./schema.js";

export type Schemas = components["schemas"];
export type BountyboardClient = Client<paths>;
/** An application/problem+json answer: every error of the service has this shape. */
export type Problem = Schemas["ProblemDetail"];

export interface ClientOptions {
  /** Where the service answers, e.g. http://127.0.0.1:8000 (no trailing /v1). */
  baseUrl: string;
  /** A bot or user key (svc-...). */
  apiKey: string;
  /** Attempts after the first on 429, 5xx, an idempotency key still in use, or a network error (default 6). */
  maxRetries?: number;
}

export class ApiError extends Error {
  constructor(readonly status: number, readonly problem: Partial<Problem>) {
    super(`${status} ${problem.code ?? "error"}: ${problem.detail ?? ""}`);
    this.name = "ApiError";
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The problem document of an error answer (empty when its body is not JSON); leaves the body unread. */
export async function problemOf(response: Response): Promise<Partial<Problem>> {
  return ((await response.clone().json().catch(() => ({}))) ?? {}) as Partial<Problem>;
}

function retryingFetch(maxRetries: number): (request: Request) => Promise<Response> {
  return async (request) => {
    for (let attempt = 0; ; attempt++) {
      let wait = 0;
      try {
        // Each attempt sends a copy: a body can be read once.
        const response = await fetch(request.clone());
        const busy = response.status === 429 || response.status >= 500
          || (response.status === 409 && (await problemOf(response)).code === "idempotency_key_in_use");
        if (!busy || attempt >= maxRetries) return response;
        wait = (Number(response.headers.get("Retry-After")) || 0) * 1000;  // seconds; a date counts as none
      } catch (error) {
        if (attempt >= maxRetries) throw error;
      }
      await sleep(Math.max(wait, Math.random() * 250 * 2 ** attempt));
    }
  };
}

export function createBountyboardClient(options: ClientOptions): BountyboardClient {
  const client = createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ""),
    fetch: retryingFetch(options.maxRetries ?? 6),
  });
  client.use({
    onRequest({ request }) {
      request.headers.set("Authorization", `Bearer ${options.apiKey}`);
      request.headers.set("Accept", "application/json");
      // A POST without a key of the caller's own still gets one, the same on every retry of it.
      if (request.method === "POST" && !request.headers.has("Idempotency-Key")) {
        request.headers.set("Idempotency-Key", crypto.randomUUID());
      }
      return request;
    },
  });
  return client;
}

/** The data of an answer, or an ApiError carrying its problem document. */
export function dataOf<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.data !== undefined) return result.data;
  throw new ApiError(result.response.status, (result.error ?? {}) as Partial<Problem>);
}
