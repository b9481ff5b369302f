// Resources a run opens (its trace, log, transport), released in reverse order of opening when it
// ends, also when it fails. A failed run's error is the one thrown (a release that fails then is
// not allowed to hide it); after a successful run, the first release that failed is thrown, once
// every release has run.

export class Resources {
  private readonly releases: Array<(failure: unknown) => Promise<void>> = [];

  /** Registers `resource`'s release; returns the resource. `failure` is what the run failed with, or undefined. */
  add<T>(resource: T, release: (resource: T, failure: unknown) => Promise<void>): T {
    this.releases.push((failure) => release(resource, failure));
    return resource;
  }

  /** Runs the releases, last registered first. */
  async release(failed: { readonly error: unknown } | null): Promise<void> {
    let releaseError: { readonly error: unknown } | null = null;
    for (const release of this.releases.splice(0).reverse()) {
      try {
        await release(failed?.error);
      } catch (error) {
        releaseError ??= { error };
      }
    }
    if (failed === null && releaseError !== null) throw releaseError.error;
  }
}

/** Runs `body` with a fresh set of resources and releases them when it ends, whichever way. */
export async function withResources<A>(body: (resources: Resources) => Promise<A>): Promise<A> {
  const resources = new Resources();
  let result: A;
  try {
    result = await body(resources);
  } catch (error) {
    await resources.release({ error });
    throw error;
  }
  await resources.release(null);
  return result;
}
