// A report worker thread: reads a share of a sweep's episode logs and sends back their metrics.
import { parentPort, workerData } from "node:worker_threads";
import { metricsOfLog } from "./metrics.ts";

const { dirs } = workerData as { dirs: string[] };
parentPort!.postMessage(dirs.map((d) => metricsOfLog(d)));
