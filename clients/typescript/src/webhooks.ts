// Verifying a webhook delivery as the Standard Webhooks specification defines it, with Web Crypto
// only: HMAC-SHA256 over "{webhook-id}.{webhook-timestamp}.{raw body}" under the base64 secret after
// its "whsec_" prefix, sent as "v1,<base64>" (two of them, space-separated, during a rotation).

export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "WebhookVerificationError";
  }
}

/** The JSON body of every delivery. */
export interface WebhookEvent {
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
}

/** Request headers as fetch (`Headers`) or node:http (`IncomingHttpHeaders`) give them. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

const SECRET_PREFIX = "whsec_";
const encoder = new TextEncoder();

function header(headers: WebhookHeaders, name: string): string {
  const value = headers instanceof Headers ? headers.get(name) : headers[name];
  const single = Array.isArray(value) ? value[0] : value;
  if (!single) throw new WebhookVerificationError(`missing ${name} header`);
  return single;
}

function base64Bytes(text: string): Uint8Array {
  return Uint8Array.from(atob(text), (char) => char.charCodeAt(0));
}

/**
 * Check a delivery's signature and timestamp (within `toleranceSeconds`, default 5 minutes, of
 * `now`) and answer its parsed body. Pass the raw body, exactly as received, before any JSON parsing.
 * Throws WebhookVerificationError when anything does not match.
 */
export async function verifyWebhook(secret: string, headers: WebhookHeaders, rawBody: string | Uint8Array,
                                    options: { toleranceSeconds?: number; now?: Date } = {}): Promise<WebhookEvent> {
  const id = header(headers, "webhook-id");
  const timestamp = header(headers, "webhook-timestamp");
  const signatures = header(headers, "webhook-signature");
  const sentAt = Number(timestamp);
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
  if (!/^\d+$/.test(timestamp) || Math.abs(now - sentAt) > (options.toleranceSeconds ?? 300)) {
    throw new WebhookVerificationError("webhook-timestamp is outside the tolerance window");
  }
  const body = typeof rawBody === "string" ? rawBody : new TextDecoder().decode(rawBody);
  const key = await crypto.subtle.importKey(
    "raw", new Uint8Array(base64Bytes(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret)),
    { name: "HMAC", hash: "SHA-256" }, false, ["verify"],
  );
  const signed = encoder.encode(`${id}.${timestamp}.${body}`);
  for (const entry of signatures.split(" ")) {
    const [version, signature] = entry.split(",", 2);
    if (version !== "v1" || !signature) continue;
    let candidate: Uint8Array;
    try {
      candidate = base64Bytes(signature);
    } catch {
      continue;
    }
    // subtle.verify compares in constant time.
    if (await crypto.subtle.verify("HMAC", key, new Uint8Array(candidate), signed)) {
      return JSON.parse(body) as WebhookEvent;
    }
  }
  throw new WebhookVerificationError("no webhook-signature matches the secret");
}
