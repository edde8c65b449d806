/**
 * `pulse completion bash|zsh`: the shell completion script, generated from the command table (cli/completion.ts).
 * `pulse completion --list profiles|nodes`: the names the scripts complete, one per line (local only, fast);
 * `--list backups --node N`: the node's .env backups (over ssh), for `rollback --to`.
 */
import { PulseError } from '../../runtime/errors.js';
import { bashCompletion, zshCompletion } from '../completion.js';
import type { CompletionOptions } from '../options.js';

async function names(what: string, nodes: string | undefined, node: string | undefined): Promise<string[]> {
  if (what === 'backups') {
    // `rollback --node N --to <TAB>`: the node's backups, read over ssh (read-only); nothing without --node
    if (node === undefined) return [];
    const { loadNodesConfig, nodeOf, targetOf } = await import('../../runtime/config/nodes.js');
    const { resolveNodesPath } = await import('../../runtime/state/paths.js');
    const { openSession } = await import('../../runtime/node/connect.js');
    const { listBackups } = await import('../../runtime/status/backups.js');
    const { isOwnBackupName } = await import('../../runtime/plan/plan.js');
    const cfg = nodeOf(loadNodesConfig(resolveNodesPath(nodes)), node);
    const session = await openSession(targetOf(node, cfg));
    try {
      // Only names of the form write-env gives (a node's directory may hold any name; the shell script checks again).
      return (await listBackups(session, cfg, null)).filter((b) => b.regular && isOwnBackupName(b.name)).map((b) => b.name);
    } finally {
      await session.close();
    }
  }
  if (what === 'profiles') {
    const { loadProfiles } = await import('../../runtime/config/profiles.js');
    return [...loadProfiles().keys()].sort();
  }
  if (what === 'nodes') {
    const { loadNodesConfig } = await import('../../runtime/config/nodes.js');
    const { resolveNodesPath } = await import('../../runtime/state/paths.js');
    return Object.keys(loadNodesConfig(resolveNodesPath(nodes)).nodes);
  }
  throw new PulseError('usage', `--list: "${what}" is not profiles, nodes or backups`);
}

export async function run(opts: CompletionOptions): Promise<number> {
  if (opts.list !== undefined) {
    const found = await names(opts.list, opts.nodes, opts.node);
    process.stdout.write(found.map((n) => `${n}\n`).join(''));
    return 0;
  }
  if (opts.shell === 'bash') process.stdout.write(bashCompletion(opts.root));
  else if (opts.shell === 'zsh') process.stdout.write(zshCompletion(opts.root));
  else throw new PulseError('usage', opts.shell ? `completion: "${opts.shell}" is not bash or zsh` : 'completion needs a shell: bash or zsh', { hint: 'see: pulse completion --help' });
  return 0;
}
