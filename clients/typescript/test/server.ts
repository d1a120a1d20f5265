/**
 * A real `engram serve --local` on a free port of 127.0.0.1, for the tests: started with
 * the engram of the repository's virtualenv (or $ENGRAM), on whatever database the
 * environment names (MEMORY_DATABASE_URL, or the embedded one under MEMORY_DATA_DIR), with
 * keys made by `engram keys create --json` for a tenant of this run.
 */

import { execFile, spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);

/** The engram command: $ENGRAM, else the repository's .venv (this file is compiled to
 * clients/typescript/dist/test/), else the one on PATH. */
export const ENGRAM = process.env.ENGRAM ?? (() => {
  const venv = fileURLToPath(new URL("../../../../.venv/bin/engram", import.meta.url));
  return existsSync(venv) ? venv : "engram";
})();

export interface Server {
  url: string;
  stop(): Promise<void>;
}

export async function createKey(tenant: string, scopes: string[] = ["write"]): Promise<string> {
  const args = ["keys", "create", "--tenant", tenant, "--json"];
  for (const scope of scopes) args.push("--scope", scope);
  const { stdout } = await run(ENGRAM, args, { maxBuffer: 1 << 20 });
  const made = JSON.parse(stdout) as { key: string };
  return made.key;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      const port = typeof address === "object" && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

export async function startServer(): Promise<Server> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(ENGRAM, ["serve", "--local", "--port", String(port),
    "--log-level", "warning"], { stdio: ["ignore", "ignore", "pipe"] });
  let output = "";
  child.stderr?.on("data", (chunk: Buffer) => { output += chunk.toString(); });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`engram serve exited: ${output}`);
    try {
      const response = await fetch(`${url}/health`);
      if (response.ok) break;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) {
      child.kill("SIGTERM");
      throw new Error(`engram serve did not answer within 120 s: ${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return {
    url,
    async stop() {
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}
