/** The one error boundary of the CLI: commands throw, main prints one short line (and the cause chain with --verbose). */
import { CommanderError } from 'commander';
import { isPulseError } from '../runtime/errors.js';
import { FAILURES } from '../runtime/failures.js';

function causeChain(err: unknown): string[] {
  const lines: string[] = [];
  let cur: unknown = err instanceof Error ? err.cause : undefined;
  while (cur !== undefined && lines.length < 8) {
    lines.push(cur instanceof Error ? `${cur.name}: ${cur.message}` : String(cur));
    cur = cur instanceof Error ? cur.cause : undefined;
  }
  return lines;
}

/**
 * A reader that went away (`pulse model up best --dry-run | head -1`): stop quietly instead of an unhandled EPIPE
 * stack. Exit 0: the reader took what it wanted.
 */
function exitQuietlyOnClosedPipe(stream: NodeJS.WriteStream): void {
  stream.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(0);
    throw e;
  });
}

export async function main(argv: string[]): Promise<void> {
  exitQuietlyOnClosedPipe(process.stdout);
  exitQuietlyOnClosedPipe(process.stderr);
  const { buildProgram } = await import('./program.js');
  const { HELP_TOPICS, helpArgv, helpTopic, versionText, wantsVersion } = await import('./help.js');
  if (wantsVersion(argv)) {
    const { currentBuildId } = await import('../worker/versioning.js');
    const { temporalBinary } = await import('./deploy-client/embedded-server.js');
    let buildId: string | null = null;
    try {
      buildId = currentBuildId();
    } catch {
      buildId = null; // the bundle is built by `npm run compile`; a bare tsc build has none
    }
    process.stdout.write(versionText({ buildId, temporalBin: temporalBinary() }));
    return;
  }
  const topic = helpTopic(argv);
  if (topic !== null) {
    process.stdout.write(HELP_TOPICS[topic]?.() ?? '');
    return;
  }
  let code = 0;
  const program = buildProgram((c) => (code = c));
  const verbose = argv.includes('--verbose');
  try {
    await program.parseAsync(helpArgv(argv));
  } catch (err) {
    code = report(err, verbose);
    if (statusJson(argv) && code !== 0) {
      // `status --json` is read by scripts: a usage error they made is JSON on stdout too (docs/STATUS.md).
      const message = err instanceof Error ? err.message.replace(/^error: /, '') : String(err);
      process.stdout.write(`${JSON.stringify({ version: 1, error: { kind: 'usage', exit: code, message, hint: 'see: pulse model status --help' } }, null, 2)}\n`);
    }
  }
  process.exitCode = code;
}

/** `pulse [globals] model status ... --json`: its errors are JSON. */
function statusJson(argv: string[]): boolean {
  const model = argv.indexOf('model');
  return model >= 0 && argv[model + 1] === 'status' && argv.includes('--json');
}

export function report(err: unknown, verbose: boolean): number {
  if (err instanceof CommanderError) {
    // commander already printed its message (help, version, or a usage error).
    if (err.code === 'commander.helpDisplayed' || err.code === 'commander.help' || err.code === 'commander.version') return 0;
    return FAILURES.usage.exit;
  }
  if (isPulseError(err)) {
    process.stderr.write(`pulse: ${err.message}\n`);
    if (err.hint) process.stderr.write(`  ${err.hint}\n`);
    if (verbose) for (const line of causeChain(err)) process.stderr.write(`  caused by: ${line}\n`);
    return FAILURES[err.kind].exit;
  }
  const msg = err instanceof Error ? err.message : String(err);
  process.stderr.write(`pulse: internal error: ${msg}\n`);
  if (verbose && err instanceof Error && err.stack) process.stderr.write(`${err.stack}\n`);
  else process.stderr.write('  run again with --verbose for the stack trace\n');
  return FAILURES.internal.exit;
}
