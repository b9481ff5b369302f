// The local model's client for a gateway whose config names one (`--llm local`): one per model file
// and process, loaded on its first call, so eval cells and forks in one process share the model.
import { localModelClient, type LocalChatClient } from "../../infra/localModelClient.ts";
import type { LlmConfig } from "./config.ts";
import { checkLocalModel, isLocalBaseURL, localPathOf, runtimeEntry } from "./localModel.ts";

const clients = new Map<string, LocalChatClient>();

/** The in-process client of a local model config (checked again: a file changed since is refused), else null. */
export function localClientOf(config: LlmConfig): LocalChatClient | null {
  if (!isLocalBaseURL(config.baseURL)) return null;
  const path = localPathOf(config.baseURL);
  const key = `${path}\u0000${config.seed ?? 0}`;
  let client = clients.get(key);
  if (client === undefined) {
    const model = checkLocalModel(path);
    client = localModelClient({ modelPath: model.path, modelName: model.name, runtimeEntry: runtimeEntry(model.runtime), seed: config.seed ?? 0 });
    clients.set(key, client);
  }
  return client;
}

/** Frees the loaded models (a command that is done with them; the process would exit anyway). */
export async function closeLocalClients(): Promise<void> {
  const all = [...clients.values()];
  clients.clear();
  await Promise.all(all.map((c) => c.close()));
}
