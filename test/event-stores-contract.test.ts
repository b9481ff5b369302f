import { join } from "node:path";
import { fileEventStores } from "../infra/backend.ts";
import { eventStoresContract } from "./contracts/eventStores.ts";
import { tempDir } from "./helpers.ts";

eventStoresContract("embedded file store", fileEventStores, () => join(tempDir("contract"), "log"));
