#!/usr/bin/env node
// Thin launcher so `npx probetown` works; the CLI itself is TypeScript run by Node 22's type stripping.
import { main } from "../services/cli/main.ts";

await main(process.argv);
