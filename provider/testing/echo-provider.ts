import type { ProviderImpl } from "../resources/provider-props";

/**
 * Provider of {@link Echo}: stores its input, reports a change only when the value changes, and
 * counts nothing outside state, so every engine step is observable from the outputs alone.
 */
export const echoProvider: ProviderImpl = {
  async check(_olds, news) {
    const failures =
      typeof news.value === "string" ? [] : [{ property: "value", reason: "must be a string" }];
    return { inputs: news, failures };
  },
  async diff(_id, olds, news) {
    const changed = olds.value !== news.value;
    return { changes: changed, replaces: [] };
  },
  async create(inputs) {
    return { id: `echo-${inputs.value}`, outs: { value: inputs.value, revision: 1 } };
  },
  async read(id, props) {
    return { id, props };
  },
  async update(_id, olds, news) {
    return { outs: { value: news.value, revision: (olds.revision ?? 0) + 1 } };
  },
  async delete() {},
};
