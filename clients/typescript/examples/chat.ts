/**
 * A chat loop on the memory service: before each turn, compile the prompt (the memory
 * block recalled for the message, the summaries and the recent window); after it, record
 * the user/assistant pair and observe the reply, so its "Decision:", "Constraint:" and
 * "Open:" lines count as memories at once.
 *
 *   ENGRAM_URL=http://127.0.0.1:8000 ENGRAM_API_KEY=egk_... \
 *     node dist/examples/chat.js [user] [chat]
 *
 * Reads the user's messages from standard input, one a line. With OPENAI_API_KEY or
 * OPENAI_BASE_URL (and OPENAI_MODEL) set, an OpenAI-compatible model answers; without,
 * an offline stand-in does: it says what it remembers, and turns "remember: X" into a
 * "Constraint: X" line for `observe` to keep.
 */

import { randomUUID } from "node:crypto";
import { createInterface } from "node:readline";

import { EngramClient, type Compiled } from "../src/index.js";

type Messages = Compiled["messages"];
export type Reply = (messages: Messages) => Promise<string>;

export interface Turn {
  answer: string;
  tokens: number;
  remembered: number;
}

/** One turn: compile, answer, record the pair, observe the answer. */
export async function turn(client: EngramClient, userId: string, chatId: string,
  text: string, reply: Reply): Promise<Turn> {
  const compiled = await client.context(userId, chatId, text);
  const answer = await reply(compiled.messages);
  // One key per turn: a retried post after a timeout stores the pair once.
  await client.postMessages(userId, chatId, { user: text, assistant: answer },
    { idempotencyKey: randomUUID() });
  const observed = await client.observe(userId, chatId, answer);
  return { answer, tokens: compiled.tokens, remembered: observed.applied };
}

/** The offline stand-in for a model: what the memory block holds, and "remember: X". */
export const offline: Reply = async (messages) => {
  const memory = messages.map((m) => String(m.content ?? ""))
    .find((content) => content.startsWith("<memory>")) ?? "";
  const known = memory.split("\n").filter((line) => line.startsWith("- "))
    .map((line) => line.slice(2));
  const last = String(messages[messages.length - 1]?.content ?? "");
  const asked = /^remember:?\s+(.+)$/i.exec(last.trim());
  if (asked) return `Noted.\nConstraint: ${asked[1]}`;
  return known.length ? `What I remember: ${known.join("; ")}` : "I don't know you yet.";
};

/** An OpenAI-compatible chat completion. */
export function openai(baseUrl: string, apiKey: string, model: string): Reply {
  return async (messages) => {
    const response = await fetch(`${baseUrl.replace(/\/+$/, "")}/chat/completions`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${apiKey}` },
      body: JSON.stringify({ model, messages }),
    });
    if (!response.ok) throw new Error(`the model answered ${response.status}`);
    const data = await response.json() as { choices: { message: { content: string } }[] };
    return data.choices[0]?.message.content ?? "";
  };
}

async function main(): Promise<void> {
  const [userId = "me", chatId = "default"] = process.argv.slice(2);
  const client = new EngramClient({
    baseUrl: process.env.ENGRAM_URL ?? "http://127.0.0.1:8000",
    apiKey: process.env.ENGRAM_API_KEY,
  });
  const env = process.env;
  const reply = env.OPENAI_API_KEY || env.OPENAI_BASE_URL
    ? openai(env.OPENAI_BASE_URL ?? "https://api.openai.com/v1", env.OPENAI_API_KEY ?? "",
      env.OPENAI_MODEL ?? "gpt-4o-mini")
    : offline;
  const chat = await client.openChat(userId, chatId);
  console.log(`${chat.created ? "new" : "resumed"} chat ${userId}/${chatId}`);
  for await (const line of createInterface({ input: process.stdin })) {
    if (!line.trim()) continue;
    const done = await turn(client, userId, chatId, line, reply);
    console.log(`assistant: ${done.answer}`);
    console.log(`  (prompt ${done.tokens} tokens; ${done.remembered} remembered now)`);
  }
}

// Run as a program (not when a test imports the module).
if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
