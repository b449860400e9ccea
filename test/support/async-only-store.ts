// A store seen through its async Store methods only, hiding MemoryStore's synchronous face: the
// path an I/O-backed store takes. Erasable TypeScript with type-only imports: the benchmarks load
// it too.
import type { MemoryStore, Store } from "../../provider/allocator";

/** `store` through the async methods of the Store interface only. */
export function asyncOnly(store: MemoryStore): Store {
  return {
    reserve: (id, ip, rangeId) => store.reserve(id, ip, rangeId),
    lastReservedIP: (rangeId) => store.lastReservedIP(rangeId),
    releaseByID: (id) => store.releaseByID(id),
    getByID: (id) => store.getByID(id),
    reserved: () => store.reserved(),
  };
}
