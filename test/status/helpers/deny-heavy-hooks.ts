/** Module hooks for the fragment test: resolving @temporalio/* or ssh2 fails, so loading them fails the command. */
export async function resolve(
  specifier: string,
  context: unknown,
  next: (s: string, c: unknown) => Promise<unknown>,
): Promise<unknown> {
  if (specifier.startsWith('@temporalio/') || specifier === 'ssh2') throw new Error(`local-only command loaded ${specifier}`);
  return next(specifier, context);
}
