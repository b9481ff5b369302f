import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LogRecord } from "../events/record.ts";
import { segmentFiles } from "../infra/fileEventStore.ts";

export const tempDir = (label: string): string => mkdtempSync(join(tmpdir(), `probetown-${label}-`));

export function logLines(episodeDir: string): string[] {
  return segmentFiles(join(episodeDir, "log")).flatMap((f) => readFileSync(f, "utf8").split("\n").filter((l) => l.length > 0));
}

export function logRecords(episodeDir: string): LogRecord[] {
  return logLines(episodeDir).map((l) => JSON.parse(l) as LogRecord);
}

export const withoutMetaLine = (r: LogRecord) => {
  const { meta: _m, ...rest } = r;
  return rest;
};

export const firstSegment = (episodeDir: string): string => segmentFiles(join(episodeDir, "log"))[0]!;
