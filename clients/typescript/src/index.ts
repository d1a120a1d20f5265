export * from "./client.js";
export type { components, paths } from "./schema.js";
