// The dashboard's Jaeger deep links (services/ui/jaeger.ts): the base address with or without a
// trailing slash, under a path prefix, and refused when a link could not be joined to it; a trace
// id linked only in a form Jaeger finds.
import { describe, expect, it } from "vitest";
import { jaegerBase, jaegerBaseProblem, jaegerTraceId, jaegerTraceUrl } from "../services/ui/jaeger.ts";
import { startUi } from "../services/ui/server.ts";
import { UsageError } from "../services/kernel/usageError.ts";
import { tempDir } from "./helpers.ts";

const ID = "4bf92f3577b34da6a3ce929d0e0e4736";

describe("Jaeger deep links", () => {
  it("joins the trace to the base with or without its trailing slash, keeping a path prefix", () => {
    for (const base of ["http://localhost:16686", "http://localhost:16686/", "http://localhost:16686//"]) {
      expect(jaegerTraceUrl(jaegerBase(base), ID)).toBe(`http://localhost:16686/trace/${ID}`);
    }
    for (const base of ["https://ops.example/jaeger", "https://ops.example/jaeger/"]) {
      expect(jaegerTraceUrl(jaegerBase(base), ID)).toBe(`https://ops.example/jaeger/trace/${ID}`);
    }
    // A path that needs encoding stays encoded once.
    expect(jaegerTraceUrl(jaegerBase("http://h:1/my tools"), ID)).toBe(`http://h:1/my%20tools/trace/${ID}`);
  });

  it("links only ids Jaeger looks up: 32 or 16 hex digits, not all zeros, lower-cased", () => {
    expect(jaegerTraceId(ID.toUpperCase())).toBe(ID);
    expect(jaegerTraceId("a3ce929d0e0e4736")).toBe("a3ce929d0e0e4736");
    for (const bad of ["0".repeat(32), "0".repeat(16), `${ID}0`, ID.slice(1), "zz".repeat(16), "", "../../admin", `${ID.slice(0, 30)}/x`]) {
      expect(jaegerTraceId(bad), bad).toBeNull();
      expect(jaegerTraceUrl("http://localhost:16686/", bad), bad).toBeNull();
    }
  });

  it("refuses a base a link cannot be joined to, naming why", () => {
    expect(jaegerBaseProblem("jaeger:16686")).toContain("not http(s)");
    expect(jaegerBaseProblem("localhost:16686")).not.toBeNull();
    expect(jaegerBaseProblem("http://localhost:16686/?x=1")).toContain("query");
    expect(jaegerBaseProblem("http://localhost:16686/#/search")).toContain("fragment");
    expect(jaegerBaseProblem("http://me:secret@localhost:16686")).toContain("credentials");
    expect(() => jaegerBase("ftp://x")).toThrow(UsageError);
  });

  it("startUi refuses a bad --jaeger before it listens", async () => {
    await expect(startUi({ runs: tempDir("ui-jaeger"), port: 0, host: "127.0.0.1", jaeger: "http://h/?q" })).rejects.toBeInstanceOf(UsageError);
  });
});
