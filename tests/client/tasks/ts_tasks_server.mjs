// The TypeScript SDK's tasks (@modelcontextprotocol/sdk 1.32.2, experimental, 2025-11-25) as a peer
// for the client's interop tests, over stdio:
//
//   node tests/client/tasks/ts_tasks_server.mjs
//
// Written as the SDK's own example (examples/server/simpleStreamableHttp.js) does: an
// InMemoryTaskStore and InMemoryTaskMessageQueue, tools registered with registerToolTask, the
// work done after createTask returns. Tasks suggest a 20 ms poll interval. Tools:
//
// * delay({ms}), taskSupport optional: statusMessage "halfway", then "waited <ms> ms";
// * ask, required: asks "Your name?" with elicitInput tied to the task (relatedTask), which the
//   SDK queues for the tasks/result stream (the peer marks the task input_required first, as the SDK
//   does for a request made inside a task handler); then "hello <name>";
// * stall, required: never ends by itself (tasks/cancel ends it);
// * broken, required: the task fails with a tool error ({isError: true}).

import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { InMemoryTaskMessageQueue, InMemoryTaskStore } from "@modelcontextprotocol/sdk/experimental/tasks";
import { z } from "zod";

const taskStore = new InMemoryTaskStore();
const server = new McpServer(
  { name: "ts-tasks-peer", version: "1.0.0" },
  {
    capabilities: { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
    taskStore,
    taskMessageQueue: new InMemoryTaskMessageQueue(),
  },
);
const POLL = 20;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const text = (value) => ({ content: [{ type: "text", text: value }] });
// A task cancelled meanwhile keeps its status: the store refuses a second terminal status.
const settle = (taskId, status, result) => taskStore.storeTaskResult(taskId, status, result).catch(() => {});
const lookups = {
  async getTask(_args, { taskId, taskStore }) {
    return await taskStore.getTask(taskId);
  },
  async getTaskResult(_args, { taskId, taskStore }) {
    return await taskStore.getTaskResult(taskId);
  },
};

server.experimental.tasks.registerToolTask(
  "delay",
  { inputSchema: { ms: z.number() }, execution: { taskSupport: "optional" } },
  {
    async createTask({ ms }, { taskStore, taskRequestedTtl }) {
      const task = await taskStore.createTask({ ttl: taskRequestedTtl, pollInterval: POLL });
      (async () => {
        await sleep(ms / 2);
        await taskStore.updateTaskStatus(task.taskId, "working", "halfway").catch(() => {});
        await sleep(ms / 2);
        await settle(task.taskId, "completed", text(`waited ${ms} ms`));
      })();
      return { task };
    },
    ...lookups,
  },
);

server.experimental.tasks.registerToolTask(
  "ask",
  { execution: { taskSupport: "required" } },
  {
    async createTask({ taskStore, taskRequestedTtl }) {
      const task = await taskStore.createTask({ ttl: taskRequestedTtl, pollInterval: POLL });
      (async () => {
        try {
          // What the SDK's sendRequest does for a request made inside a task's handler.
          await taskStore.updateTaskStatus(task.taskId, "input_required");
          const answer = await server.server.elicitInput(
            {
              mode: "form",
              message: "Your name?",
              requestedSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
            },
            { relatedTask: { taskId: task.taskId } },
          );
          const name = answer.action === "accept" ? answer.content?.name : answer.action;
          await settle(task.taskId, "completed", text(`hello ${name}`));
        } catch (error) {
          await settle(task.taskId, "failed", { ...text(String(error)), isError: true });
        }
      })();
      return { task };
    },
    ...lookups,
  },
);

server.experimental.tasks.registerToolTask(
  "stall",
  { execution: { taskSupport: "required" } },
  {
    async createTask({ taskStore, taskRequestedTtl }) {
      return { task: await taskStore.createTask({ ttl: taskRequestedTtl, pollInterval: POLL }) };
    },
    ...lookups,
  },
);

server.experimental.tasks.registerToolTask(
  "broken",
  { execution: { taskSupport: "required" } },
  {
    async createTask({ taskStore, taskRequestedTtl }) {
      const task = await taskStore.createTask({ ttl: taskRequestedTtl, pollInterval: POLL });
      (async () => {
        await sleep(20);
        await settle(task.taskId, "failed", { ...text("the disk is full"), isError: true });
      })();
      return { task };
    },
    ...lookups,
  },
);

await server.connect(new StdioServerTransport());
