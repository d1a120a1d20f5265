/**
 * The client against a real `engram serve` (test/server.ts): every route once, the keys'
 * refusals, and the example chat loop as a program.
 */

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";

import { EngramClient, EngramError } from "../src/index.js";
import { createKey, startServer, type Server } from "./server.js";

// A tenant of this run: the database may hold earlier runs' users.
const TENANT = `ts-${randomBytes(4).toString("hex")}`;
const OTHER = `${TENANT}-other`;

let server: Server;
let writer: EngramClient;
let reader: EngramClient;
let admin: EngramClient;
let other: EngramClient;
let writeKey: string;

before(async () => {
  server = await startServer();
  writeKey = await createKey(TENANT, ["write"]);
  const [readKey, adminKey, otherKey] = await Promise.all([createKey(TENANT, ["read"]),
    createKey(TENANT, ["admin"]), createKey(OTHER, ["write"])]);
  const at = (apiKey: string) => new EngramClient({ baseUrl: server.url, apiKey });
  writer = at(writeKey);
  reader = at(readKey);
  admin = at(adminKey);
  other = at(otherKey);
});

after(async () => {
  await server?.stop();
});

async function refused(call: Promise<unknown>, status: number): Promise<EngramError> {
  const error = await call.then(() => undefined, (e: unknown) => e);
  assert.ok(error instanceof EngramError, `expected a refusal ${status}, got ${error}`);
  assert.equal(error.status, status, error.message);
  return error;
}

describe("probes and keys", () => {
  test("health and ready answer without a key", async () => {
    const anonymous = new EngramClient({ baseUrl: server.url });
    assert.equal((await anonymous.health()).status, "ok");
    assert.equal((await anonymous.ready()).status, "ready");
  });

  test("no key, or a wrong one, is a 401 problem document", async () => {
    const anonymous = new EngramClient({ baseUrl: server.url });
    const missing = await refused(anonymous.getChat("u1", "c1"), 401);
    assert.equal(missing.problem.status, 401);
    const wrong = new EngramClient({ baseUrl: server.url, apiKey: `${writeKey}x` });
    await refused(wrong.memories("u1", "c1"), 401);
  });

  test("a read key cannot write, another tenant's key finds nothing", async () => {
    await writer.openChat("shared", "c1");
    await refused(reader.postMessages("shared", "c1", { role: "user", content: "hi" }), 403);
    await refused(other.getChat("shared", "c1"), 404);
    assert.equal((await reader.getChat("shared", "c1")).chat_id, "c1");
  });
});

describe("a chat", () => {
  const user = "ana";
  const chat = "kitchen";

  test("get-or-create says whether the chat is new", async () => {
    assert.equal((await writer.openChat(user, chat)).created, true);
    const again = await writer.openChat(user, chat);
    assert.equal(again.created, false);
    assert.equal(again.user_id, user);  // the caller's id, not the tenant's stored one
  });

  test("a retried post with the same Idempotency-Key stores one pair", async () => {
    const pair = { user: "I moved to Porto last month.", assistant: "How are you settling in?" };
    const first = await writer.postMessages(user, chat, pair, { idempotencyKey: "turn-1" });
    const retry = await writer.postMessages(user, chat, pair, { idempotencyKey: "turn-1" });
    assert.equal(first.ids.length, 2);
    assert.deepEqual(retry.ids, first.ids);
    assert.equal(retry.replayed, true);
    const page = await writer.messages(user, chat, { limit: 10 });
    assert.deepEqual(page.messages.map((m) => m.content), [pair.user, pair.assistant]);
  });

  test("ops through the gate, then recall and the compiled context show them", async () => {
    const applied = await writer.applyOps(user, chat, [
      { op: "add", type: "profile", content: "Works as a nurse in Porto", confidence: 0.95 },
      { op: "add", type: "preference", content: "Is vegetarian", confidence: 0.95 },
    ]);
    assert.equal(applied.applied, 2);
    const block = await writer.recall(user, chat, "What should I cook after my hospital shift?");
    assert.match(block.text, /nurse in Porto/);
    assert.ok(block.items.every((i) => typeof i.score === "number"));
    assert.ok(block.tokens <= block.budget);
    const compiled = await writer.context(user, chat, "Any dinner ideas?");
    assert.equal(compiled.messages.at(-1)?.content, "Any dinner ideas?");
    assert.ok(compiled.messages.some((m) => String(m.content).includes("vegetarian")));
    assert.ok(compiled.tokens <= compiled.budget);
  });

  test("memories: filters, one memory, its history, forget and pin", async () => {
    const profiles = await writer.memories(user, chat, { type: ["profile"] });
    assert.deepEqual(profiles.map((m) => m.content), ["Works as a nurse in Porto"]);
    const found = await writer.memories(user, chat, { text: "vegetarian" });
    assert.equal(found.length, 1);
    const id = found[0]!.id;
    assert.equal((await writer.memory(user, chat, id)).content, "Is vegetarian");
    assert.equal((await writer.pin(user, chat, id)).pinned, true);

    const nurse = profiles[0]!.id;
    const forgot = await writer.forget(user, chat, nurse, "asked to");
    assert.equal(forgot.applied, 1);
    const events = await writer.history(user, chat, nurse);
    assert.deepEqual(events.map((e) => e.op), ["add", "forget"]);
    const active = await writer.memories(user, chat, { status: ["active"] });
    assert.ok(!active.some((m) => m.id === nurse));
    await refused(writer.memory(user, chat, nurse + 10_000), 404);
    await refused(other.history(user, chat, nurse), 404);
  });

  test("observe lifts the reply's Decision: lines into memories", async () => {
    const observed = await writer.observe(user, chat,
      "Sounds good.\nDecision: We will plan a weekly vegetarian menu together.");
    assert.equal(observed.applied, 1);
  });

  test("settings and diagnostics of the window", async () => {
    const patched = await writer.patchSettings(user, chat, { raw_pairs: 4 });
    assert.equal(patched.raw_pairs, 4);
    assert.equal((await writer.settings(user, chat)).raw_pairs, 4);
    const diagnostics = await writer.diagnostics(user, chat);
    assert.ok(diagnostics !== null && typeof diagnostics === "object");
  });

  test("export, erase and import the user", async () => {
    const kept = (await writer.memories(user, chat)).map((m) => m.content).sort();
    const exported = await writer.exportUser(user);
    const lines = exported.trim().split("\n");
    assert.ok(lines.length > 3);
    const erased = await writer.eraseUser(user);
    assert.ok(erased.deleted > 0);
    await refused(writer.memory(user, chat, 1), 404);
    const imported = await writer.importUser(user, exported);
    assert.ok((imported.rows ?? 0) > 0);
    const restored = (await writer.memories(user, chat)).map((m) => m.content).sort();
    assert.deepEqual(restored, kept);
    assert.ok(kept.includes("Is vegetarian"));
  });
});

describe("jobs", () => {
  test("an admin key lists the jobs; a write key may not", async () => {
    const jobs = await admin.jobs();
    assert.ok(jobs.some((j) => j.name === "extract"));
    await refused(writer.jobs(), 403);
  });
});

describe("the example chat loop", () => {
  test("records, compiles and observes each turn", async () => {
    const program = fileURLToPath(new URL("../examples/chat.js", import.meta.url));
    const child = spawn(process.execPath, [program, "zoe", "loop"], {
      env: { ...process.env, ENGRAM_URL: server.url, ENGRAM_API_KEY: writeKey,
        OPENAI_API_KEY: "", OPENAI_BASE_URL: "" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => { stdout += chunk.toString(); });
    child.stderr.on("data", (chunk: Buffer) => { stderr += chunk.toString(); });
    child.stdin.end("remember: The user is allergic to peanuts\nWhat snack should I bring?\n");
    const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
    assert.equal(code, 0, stderr);
    assert.match(stdout, /^new chat zoe\/loop/);
    assert.match(stdout, /1 remembered now/);
    assert.match(stdout, /What I remember: .*allergic to peanuts/);
    const log = await writer.messages("zoe", "loop", { limit: 10 });
    assert.equal(log.messages.length, 4);
  });
});
