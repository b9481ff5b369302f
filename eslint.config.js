// Lint rules that protect determinism (DESIGN §4): actors/ and events/ must not read the wall
// clock, Math.random or random ids; every nondeterministic input has to arrive as an event.
import tseslint from "typescript-eslint";

const nondeterminism = {
  "no-restricted-properties": [
    "error",
    { object: "Math", property: "random", message: "Use a named RNG stream (actors/rng.ts): Math.random breaks replay." },
    { object: "Date", property: "now", message: "Actors use logical ticks; wall-clock time belongs in record meta." },
    { object: "performance", property: "now", message: "Actors use logical ticks; timing belongs in telemetry." },
    { object: "crypto", property: "randomUUID", message: "Derive ids from (episode, seq) or content hashes." },
  ],
  "no-restricted-syntax": [
    "error",
    { selector: "NewExpression[callee.name='Date']", message: "new Date() reads the wall clock: not allowed in actors/ or events/." },
    { selector: "CallExpression[callee.name='Date']", message: "Date() reads the wall clock: not allowed in actors/ or events/." },
  ],
  "no-restricted-imports": [
    "error",
    { paths: [{ name: "node:crypto", importNames: ["randomUUID", "randomBytes", "randomInt"], message: "Randomness must come from named RNG streams." }],
      patterns: [{ group: ["**/infra/**", "**/services/**"], message: "actors/ and events/ must not depend on infra/ or services/ (DESIGN §2)." }] },
  ],
};

export default tseslint.config(
  { ignores: ["node_modules/**", "runs/**", "docs/**", "coverage/**"] },
  {
    files: ["**/*.ts"],
    languageOptions: { parser: tseslint.parser, parserOptions: { ecmaVersion: 2023, sourceType: "module" } },
    plugins: { "@typescript-eslint": tseslint.plugin },
    rules: {},
  },
  { files: ["actors/**/*.ts", "events/**/*.ts"], ignores: ["**/*.test.ts"], rules: nondeterminism },
);
