// How many servers of a JetStream cluster keep what probetown creates (docs/distributed.md,
// "A JetStream cluster"): the log stream, the lock and snapshot buckets, the job and result
// streams are created with the replica count the connection asks for (natsReplicas: `--nats-replicas`,
// PROBETOWN_NATS_REPLICAS), one when none is asked. An existing stream is never changed: one with
// another count than the one asked for is refused (ReplicasMismatch, exit 2), naming how to scale
// it; with none asked it is taken as it is, so a worker started without the setting still serves a
// namespace made with R3.
import type { NatsConnection } from "@nats-io/transport-node";
import { ExitCode, TaggedError } from "../../events/taggedError.ts";
import { NATS_REPLICAS_ENV, natsReplicas } from "../nats.ts";
import { isApiError } from "./errors.ts";

/** JSStreamReplicasNotSupportedErr: "replicas > 1 not supported in non-clustered mode". */
const REPLICAS_NOT_SUPPORTED = 10074;

/**
 * A stream or bucket that exists with another replica count than the one asked for, or that the
 * server cannot keep on as many servers (it is not part of a cluster): exit 2.
 */
export class ReplicasMismatch extends TaggedError {
  readonly _tag = "ReplicasMismatch";
  readonly exitCode = ExitCode.usage;
  readonly stream: string;
  readonly has: number;
  readonly asked: number;
  constructor(stream: string, has: number, asked: number, created: boolean) {
    const plural = (n: number) => `${n} replica${n === 1 ? "" : "s"}`;
    super(
      created
        ? `JetStream stream ${stream} cannot be kept on ${asked} servers as asked (--nats-replicas, ${NATS_REPLICAS_ENV}): the server is not part of a JetStream cluster, and keeps ${plural(has)}; connect to a cluster of at least ${asked} servers, or ask for 1`
        : `JetStream stream ${stream} exists with ${plural(has)}, not the ${asked} asked for (--nats-replicas, ${NATS_REPLICAS_ENV}); probetown does not change an existing stream: scale it (\`nats stream edit ${stream} --replicas ${asked}\`), use another --namespace, or leave the replica count unset to take it as it is`,
    );
    this.stream = stream;
    this.has = has;
    this.asked = asked;
  }
}

/** The replica count to create streams and buckets with over `nc`: the one asked for, else 1. */
export const replicasToCreate = (nc: NatsConnection): number => natsReplicas(nc) ?? 1;

/** Refuses a stream whose replica count is not the one asked for over `nc` (nothing is checked when none was asked). */
export function checkReplicas(nc: NatsConnection, stream: string, has: number | undefined, created = false): void {
  const asked = natsReplicas(nc);
  const actual = has ?? 1;
  if (asked !== undefined && actual !== asked) throw new ReplicasMismatch(stream, actual, asked, created);
}

/**
 * Creates a stream or bucket (`create`) with the replica count asked for: a server that is not part
 * of a JetStream cluster refuses more than one, which is said as a ReplicasMismatch naming the stream.
 */
export async function creating<T>(nc: NatsConnection, stream: string, create: () => Promise<T>): Promise<T> {
  try {
    return await create();
  } catch (error) {
    if (isApiError(error, REPLICAS_NOT_SUPPORTED)) throw new ReplicasMismatch(stream, 1, replicasToCreate(nc), true);
    throw error;
  }
}
