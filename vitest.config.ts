import { availableParallelism } from "node:os";
import { configDefaults, defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    // One nats-server for the whole run (test/globalSetup.ts).
    globalSetup: ["test/globalSetup.ts"],
    // This build's worlds, registered in every test file's process (services/worlds.ts).
    setupFiles: ["test/setupWorlds.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Processes, not threads: runCli (test/cliInProcess.ts) changes the working directory, which a
    // worker thread cannot, and tests send signals to their own process's children.
    pool: "forks",
    // One file more than there are cores (vitest's default is one fewer: a single worker on two
    // cores). Much of the suite waits on child processes, nats-server and timers; on two cores two
    // workers took 3m45s, three 3m29s, four 3m28s with each file slower for it.
    maxWorkers: availableParallelism() + 1,
    // The real local model (test/local-model.test.ts, skipped without it) keeps both cores busy for
    // minutes: alongside the rest it starved the NATS tests' timing (a lock renewal more, a worker
    // killed by its timeout). It runs after everything else, alone.
    projects: [
      { extends: true, test: { name: "main", include: ["test/**/*.test.ts"], exclude: [...configDefaults.exclude, "test/local-model.test.ts"], sequence: { groupOrder: 0 } } },
      { extends: true, test: { name: "local-model", include: ["test/local-model.test.ts"], sequence: { groupOrder: 1 } } },
    ],
  },
});
