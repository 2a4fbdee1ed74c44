// The TypeScript SDK (@modelcontextprotocol/sdk 1.32.2, experimental tasks, 2025-11-25) reporting a
// task's progress on the token of the request that created it (progress.mdx item 3), over stdio:
//
//   node tests/client/tasks/ts_task_progress_server.mjs
//
// One tool, count({n}), taskSupport optional: createTask answers with the task, then the work sends
// notifications/progress 1..n (total n, "step i of n") with the request's progressToken, stores the
// result "counted <n>" through the request's task store (which tells the client with
// notifications/tasks/status, as the SDK does), and then, breaking PG-15 on purpose, sends one more
// progress (n + 1) on the same token: a client must drop it, the task having ended.
// A second tool, late({token, progress}), answers at once after sending progress on any token:
// a late notification the test places after everything else.

import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { InMemoryTaskMessageQueue, InMemoryTaskStore } from "@modelcontextprotocol/sdk/experimental/tasks";
import { z } from "zod";

const server = new McpServer(
  { name: "ts-task-progress-peer", version: "1.0.0" },
  {
    capabilities: { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
    taskStore: new InMemoryTaskStore(),
    taskMessageQueue: new InMemoryTaskMessageQueue(),
  },
);
const POLL = 20;
const text = (value) => ({ content: [{ type: "text", text: value }] });

server.experimental.tasks.registerToolTask(
  "count",
  { inputSchema: { n: z.number() }, execution: { taskSupport: "optional" } },
  {
    async createTask({ n }, { taskStore, taskRequestedTtl, _meta, sendNotification }) {
      const task = await taskStore.createTask({ ttl: taskRequestedTtl, pollInterval: POLL });
      const progressToken = _meta?.progressToken;
      const progress = (params) => sendNotification({ method: "notifications/progress", params: { progressToken, ...params } });
      // After the CreateTaskResult: this function returns first, and the work waits for the next turn.
      setImmediate(async () => {
        for (let step = 1; step <= n; step++) {
          await progress({ progress: step, total: n, message: `step ${step} of ${n}` });
        }
        await taskStore.storeTaskResult(task.taskId, "completed", text(`counted ${n}`));
        await progress({ progress: n + 1, total: n, message: "after the end" });
      });
      return { task };
    },
    async getTask(_args, { taskId, taskStore }) {
      return await taskStore.getTask(taskId);
    },
    async getTaskResult(_args, { taskId, taskStore }) {
      return await taskStore.getTaskResult(taskId);
    },
  },
);

server.registerTool(
  "late",
  { inputSchema: { token: z.union([z.string(), z.number()]), progress: z.number() } },
  async ({ token, progress }, { sendNotification }) => {
    await sendNotification({ method: "notifications/progress", params: { progressToken: token, progress } });
    return text("sent");
  },
);

await server.connect(new StdioServerTransport());
