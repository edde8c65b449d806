/**
 * `pulse completion bash|zsh`: the shell completion script, generated from the command table (cli/completion.ts).
 * `pulse completion --list profiles|nodes`: the names the scripts complete, one per line (local only, fast).
 */
import { PulseError } from '../../runtime/errors.js';
import { bashCompletion, zshCompletion } from '../completion.js';
import type { CompletionOptions } from '../options.js';

async function names(what: string, nodes: string | undefined): Promise<string[]> {
  if (what === 'profiles') {
    const { loadProfiles } = await import('../../runtime/config/profiles.js');
    return [...loadProfiles().keys()].sort();
  }
  if (what === 'nodes') {
    const { loadNodesConfig } = await import('../../runtime/config/nodes.js');
    const { resolveNodesPath } = await import('../../runtime/state/paths.js');
    return Object.keys(loadNodesConfig(resolveNodesPath(nodes)).nodes);
  }
  throw new PulseError('usage', `--list: "${what}" is not profiles or nodes`);
}

export async function run(opts: CompletionOptions): Promise<number> {
  if (opts.list !== undefined) {
    const found = await names(opts.list, opts.nodes);
    process.stdout.write(found.map((n) => `${n}\n`).join(''));
    return 0;
  }
  if (opts.shell === 'bash') process.stdout.write(bashCompletion(opts.root));
  else if (opts.shell === 'zsh') process.stdout.write(zshCompletion(opts.root));
  else throw new PulseError('usage', opts.shell ? `completion: "${opts.shell}" is not bash or zsh` : 'completion needs a shell: bash or zsh', { hint: 'see: pulse completion --help' });
  return 0;
}
