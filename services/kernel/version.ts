// This build's version, apart from services/kernel/episodes.ts so that `probetown --version` reads it
// without loading the episode machinery.
import { readFileSync } from "node:fs";

/** This build's version, recorded in each episode header's meta (so a replay divergence can be told apart from a code change). */
export const PROBETOWN_VERSION: string = (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version;
