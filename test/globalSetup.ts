// One nats-server for the whole test run (random port, JetStream in a temp dir), stopped at the
// end: a server per test file cost its start-up in every one of them. Tests reach it through
// startTestNats() / natsForSuite() (test/natsServer.ts), each in namespaces of its own. With
// NATS_URL set, the tests use that server and none is started.
import type { TestProject } from "vitest/node";
import { startTestNats } from "./natsServer.ts";

declare module "vitest" {
  export interface ProvidedContext {
    natsUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const external = process.env.NATS_URL;
  if (external !== undefined && external !== "") {
    project.provide("natsUrl", external);
    return async () => {};
  }
  const server = await startTestNats({ own: true });
  project.provide("natsUrl", server.url);
  return () => server.stop();
}
