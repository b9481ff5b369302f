import { join } from "node:path";
import { EventStores } from "../infra/layers.ts";
import { eventStoresContract } from "./contracts/eventStores.ts";
import { tempDir } from "./helpers.ts";

eventStoresContract("embedded file store", EventStores.files, () => join(tempDir("contract"), "log"));
