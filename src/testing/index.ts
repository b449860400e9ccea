/**
 * Test helpers shipped with the package: {@link Echo}, a resource that manages nothing and proves
 * the engine, the serialized provider and the installed package fit together.
 * @packageDocumentation
 */
export { Echo, type EchoArgs } from "./echo";
export { echoProvider } from "./echo-provider";
