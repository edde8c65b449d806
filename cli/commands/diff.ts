/**
 * `pulse model diff <profile> --node <node> [--overlay DIR] [--json]`: old → new of every key where the profile,
 * rendered for the node as up would render it, differs from the node's running .env. Read-only: the running .env
 * comes from status.sh (no HTTP), whose text already has every secret line masked on the node. Exit 0 when the
 * values are the same, 1 (EXIT_DIFFERS) when they differ, else the failure table's code.
 */
import { EXIT_DIFFERS, EXIT_OK } from '../../runtime/failures.js';
import { diffReport, diffText } from '../diff-report.js';
import type { DiffOptions } from '../options.js';

export { diffReport, diffText, type DiffReport } from '../diff-report.js';

export async function run(opts: DiffOptions): Promise<number> {
  const report = await diffReport(opts);
  process.stdout.write(opts.json ? `${JSON.stringify(report, null, 2)}\n` : diffText(report));
  return report.same ? EXIT_OK : EXIT_DIFFERS;
}
