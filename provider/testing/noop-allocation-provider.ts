import type { ProviderImpl } from "../resources/provider-props";

/** The `seq`-th address of 10.64.0.0/16 (1-based, past the gateway .1), as an allocation would show it. */
function addressOf(seq: number): string {
  const offset = seq + 1;
  return `10.64.${(offset >> 8) & 255}.${offset & 255}`;
}

/**
 * Provider of {@link NoopAllocation}: `check` turns the program's inputs into what an allocation's
 * check returns (so preview shows it), without a pool, a lock or a ledger; the rest stores it.
 */
export const noopAllocationProvider: ProviderImpl = {
  async check(_olds, news) {
    const { holder, pool, ...rest } = news;
    const seq = rest.seq;
    if (!Number.isInteger(seq) || seq < 1 || seq > 65_532) {
      return { inputs: news, failures: [{ property: "seq", reason: "must be an integer from 1 to 65532" }] };
    }
    const ip = addressOf(seq);
    const { stack, owner } = holder as { stack: string; owner: string };
    return {
      inputs: { ...rest, stack, owner, poolId: pool, ip, ips: [ip], cidr: `${ip}/16`, gateway: "10.64.0.1" },
    };
  },
  async diff(_id, olds, news) {
    const replaces = olds.poolId === news.poolId ? [] : ["pool"];
    return { changes: replaces.length > 0 || olds.ip !== news.ip, replaces };
  },
  async create(inputs) {
    return { id: String(inputs.ip), outs: inputs };
  },
  async read(id, props) {
    return { id, props };
  },
  async update(_id, _olds, news) {
    return { outs: news };
  },
  async delete() {},
};
