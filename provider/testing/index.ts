/**
 * Test helpers shipped with the package: {@link Echo}, a resource that manages nothing and proves
 * the engine, the serialized provider and the installed package fit together, and
 * {@link NoopAllocation}, which keeps what an allocation keeps and plans nothing (the engine
 * benchmark's floor).
 * @packageDocumentation
 */
export { Echo, type EchoArgs } from "./echo";
export { echoProvider } from "./echo-provider";
export { NoopAllocation, type NoopAllocationArgs } from "./noop-allocation";
export { noopAllocationProvider } from "./noop-allocation-provider";
