/** Flag parsing shared by the simulated docker subcommands, and the error type that carries docker's exit code. */

/** A docker CLI failure: message for stderr and the exit code the real CLI uses. */
export class DockerExit extends Error {
  constructor(
    message: string,
    readonly code: number,
  ) {
    super(message);
  }
}

/** The daemon's answer for an unknown container (exit 1). */
export function noSuch(ref: string): DockerExit {
  return new DockerExit(`Error response from daemon: No such container: ${ref}`, 1);
}

/** Pulls `--flag value` / `--flag=value` out of args; returns the value (last wins) or undefined. */
export function takeOption(args: string[], names: string[]): string | undefined {
  let value: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const eq = a.indexOf('=');
    if (a.startsWith('-') && eq > 0 && names.includes(a.slice(0, eq))) {
      value = a.slice(eq + 1);
      args.splice(i--, 1);
    } else if (names.includes(a)) {
      value = args[i + 1];
      args.splice(i--, 2);
    }
  }
  return value;
}

export function takeAll(args: string[], names: string[]): string[] {
  const out: string[] = [];
  for (let v = takeOption(args, names); v !== undefined; v = takeOption(args, names)) out.push(v);
  return out;
}

export function takeFlag(args: string[], names: string[]): boolean {
  const before = args.length;
  for (let i = args.length - 1; i >= 0; i--) if (names.includes(args[i]!)) args.splice(i, 1);
  return args.length !== before;
}

