/** Resource properties as the dynamic provider passes them: plain JSON values. */
export type Props = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** The text of a thrown value, for check failures and error messages. */
export const errorMessage = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** Properties without the serialized provider, which the engine adds back to outputs itself. */
export function withoutProvider(props: Props): Props {
  const { __provider: _provider, ...rest } = props;
  return rest;
}
