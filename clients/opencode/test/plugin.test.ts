/**
 * The plugin against a live Memory Lane server. Run through pytest
 * (tests/integrations/test_opencode_plugin.py), which starts the server and sets MEMLANE_URL and
 * MEMLANE_TOKEN; OpenCode's side (client.session.messages) is a stand-in returning fixed messages
 * in the SDK's shapes.
 */
import assert from "node:assert/strict"
import { test } from "node:test"
import { MemoryLanePlugin } from "../src/memory-lane.ts"

const URL_ = process.env.MEMLANE_URL
const TOKEN = process.env.MEMLANE_TOKEN
if (!URL_ || !TOKEN) throw new Error("Set MEMLANE_URL and MEMLANE_TOKEN (pytest tests/integrations/test_opencode_plugin.py does).")

async function api(method: string, path: string, body?: unknown) {
  const response = await fetch(`${URL_}/api/v1${path}`, {
    method,
    headers: { Authorization: `Bearer ${TOKEN}`, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  return { status: response.status, body: (await response.json()) as any }
}

const t0 = Date.parse("2026-03-02T10:00:00Z")
const directory = "/home/dev/billing-api"
const MESSAGES = [
  { info: { role: "user", id: "m1", time: { created: t0 } }, parts: [{ type: "text", text: "Add a refund endpoint; never call stripe directly." }] },
  {
    info: { role: "assistant", id: "m2", time: { created: t0 + 1000, completed: t0 + 60_000 } },
    parts: [
      { type: "reasoning", text: "thinking…" },
      { type: "text", text: "Running the tests first." },
      { type: "tool", tool: "bash", callID: "c1", state: { status: "error", input: { command: "pytest" }, error: "ImportError: refund" } },
      { type: "tool", tool: "edit", callID: "c2", state: { status: "completed", input: { filePath: `${directory}/src/refunds/service.py` }, output: "ok" } },
      { type: "tool", tool: "bash", callID: "c3", state: { status: "completed", input: { command: "pytest" }, output: "3 passed" } },
    ],
  },
  { info: { role: "user", id: "m3", time: { created: t0 + 120_000 } }, parts: [{ type: "text", text: "thanks", synthetic: false }] },
]

function fakeClient(messages = MESSAGES) {
  return { session: { messages: async ({ path }: { path: { id: string } }) => ({ data: path.id ? messages : [] }) } }
}

async function plugin(env: Record<string, string> = {}) {
  const saved = { ...process.env }
  Object.assign(process.env, env)
  try {
    return await MemoryLanePlugin({ client: fakeClient(), directory, worktree: directory } as any)
  } finally {
    process.env = saved
  }
}

const toolContext = (sessionID: string) => ({ sessionID, messageID: "m", agent: "build", directory, worktree: directory, abort: new AbortController().signal, metadata() {}, ask: async () => {} }) as any

test("the system prompt gets the team context, fetched once per session", async () => {
  const stored = await api("POST", "/observations", { content: "Refund jobs must be idempotent by order id.", priority: "critical", type: "commitment" })
  assert.equal(stored.status, 201)
  const hooks = await plugin()
  const transform = hooks["experimental.chat.system.transform"]!
  const first = { system: ["You are OpenCode."] }
  await transform({ sessionID: "oc-ctx-1", model: {} as any }, first)
  assert.equal(first.system.length, 2)
  assert.ok(first.system[1].startsWith('<team-memory source="memory-lane">'))
  assert.ok(first.system[1].includes(stored.body.memory.id))
  const second = { system: ["You are OpenCode."] }
  await transform({ sessionID: "oc-ctx-1", model: {} as any }, second)
  assert.deepEqual(second.system, first.system) // the same block on every turn, from one fetch
  const session = await api("GET", "/sessions/oc-ctx-1")
  assert.equal(session.body.recalled, first.system[1].split("\n").filter((line) => line.startsWith("- [")).length)
})

test("the custom tools store, find and rate memories; an ambiguous name lists its candidates", async () => {
  const hooks = await plugin()
  const tools = hooks.tool!
  const stored = JSON.parse(
    await tools.memory_lane_store.execute(
      { information: "Webhook retries back off exponentially up to one hour.", type: "decision", entities: ["project:billing-api"] } as any,
      toolContext("oc-tools-1"),
    ) as string,
  )
  assert.equal(stored.operation, "ADD")
  assert.equal(stored.memory.agent_name, "opencode")
  const found = JSON.parse((await tools.memory_lane_find.execute({ query: "how do webhook retries back off?" } as any, toolContext("oc-tools-1"))) as string)
  assert.equal(found.results[0].memory.id, stored.memory.id)
  const rated = JSON.parse(
    (await tools.memory_lane_feedback.execute({ id: stored.memory.id, signal: "helpful" } as any, toolContext("oc-tools-1"))) as string,
  )
  assert.equal(rated.memory.helpful_count, 1)
  for (const [slug, content] of [
    ["person:mark-robinson", "Mark Robinson owns the ledger service."],
    ["person:mark-smith", "Ask Mark Smith before changing the CI images."],
  ])
    assert.equal((await api("POST", "/observations", { content, entities: [slug] })).status, 201)
  await assert.rejects(
    tools.memory_lane_find.execute({ query: "who owns it", entities: ["Mark"] } as any, toolContext("oc-tools-1")) as Promise<unknown>,
    /CLARIFICATION_REQUIRED[\s\S]*person:mark-robinson, person:mark-smith/,
  )
})

test("session.idle uploads the transcript and dispose ends the session with its outcome", async () => {
  const hooks = await plugin()
  await hooks["tool.execute.after"]!(
    { tool: "write", sessionID: "oc-upload-1", callID: "c9", args: { filePath: `${directory}/src/refunds/api.py` } },
    { title: "", output: "", metadata: {} },
  )
  await hooks.event!({ event: { type: "session.idle", properties: { sessionID: "oc-upload-1" } } as any })
  let session = await api("GET", "/sessions/oc-upload-1")
  assert.equal(session.body.messages, 3)
  assert.equal(session.body.ended_at, null)
  assert.equal(session.body.agent, "opencode")
  assert.equal(session.body.project, "project:billing-api")
  await hooks.event!({ event: { type: "session.idle", properties: { sessionID: "oc-upload-1" } } as any }) // idempotent
  await hooks.dispose!()
  session = await api("GET", "/sessions/oc-upload-1")
  assert.equal(session.body.messages, 3)
  assert.notEqual(session.body.ended_at, null)
  assert.equal(session.body.error_count, 1)
  assert.equal(session.body.retry_count, 1)
  assert.equal(session.body.success, true)
  assert.equal(session.body.duration_ms, 120_000)
  assert.deepEqual(session.body.files_touched, ["src/refunds/service.py", "src/refunds/api.py"])
})

test("every hook fails open when the server is down", async () => {
  const hooks = await plugin({ MEMLANE_URL: "http://127.0.0.1:9", MEMLANE_TIMEOUT: "1" })
  const output = { system: ["base"] }
  await hooks["experimental.chat.system.transform"]!({ sessionID: "oc-down-1", model: {} as any }, output)
  assert.deepEqual(output.system, ["base"])
  await hooks.event!({ event: { type: "session.idle", properties: { sessionID: "oc-down-1" } } as any })
  await hooks.dispose!()
  await assert.rejects(
    hooks.tool!.memory_lane_find.execute({ query: "x" } as any, toolContext("oc-down-1")) as Promise<unknown>,
    /unavailable/,
  )
})
