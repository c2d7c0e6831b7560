// The few Node.js declarations the example and the tests use, for the build without @types/node
// (tsconfig.no-node-types.json): everything else, the library included, needs only the web platform.
declare var process: { env: Record<string, string | undefined>; exitCode?: number };

declare module "node:fs" {
  export function existsSync(path: string): boolean;
  export function readFileSync(path: string, encoding: "utf8"): string;
  export function readFileSync(path: string): Uint8Array;
  export function writeFileSync(path: string, data: string): void;
  export function renameSync(from: string, to: string): void;
  export function rmSync(path: string, options: { force: boolean }): void;
}

declare module "node:http" {
  interface IncomingMessage {
    headers: Record<string, string | string[] | undefined>;
    on(event: "data", listener: (chunk: Uint8Array) => void): this;
    on(event: "end", listener: () => void): this;
  }
  interface ServerResponse {
    writeHead(status: number): this;
    end(): this;
  }
  interface Server {
    listen(port: number, host: string, listening: () => void): this;
    address(): { port: number } | string | null;
    close(): this;
  }
  export function createServer(handler: (request: IncomingMessage, response: ServerResponse) => void): Server;
}

declare module "node:test" {
  export function test(name: string, fn: () => Promise<void> | void): Promise<void>;
}

declare module "node:assert/strict" {
  function assert(value: unknown, message?: string): asserts value;
  namespace assert {
    function ok(value: unknown, message?: string): asserts value;
    function equal<T>(actual: unknown, expected: T, message?: string): asserts actual is T;
    function deepEqual<T>(actual: unknown, expected: T, message?: string): asserts actual is T;
    function rejects(promise: Promise<unknown>, error?: new (...args: never[]) => Error): Promise<void>;
  }
  export default assert;
}
