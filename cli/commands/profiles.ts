/** `pulse model profiles [--json]`: the profiles and the nodes. Local only: no Temporal, no ssh. */
import { loadInputs } from '../../runtime/config/index.js';
import type { ProfilesOptions } from '../options.js';
import { profilesText, type NodeRow, type ProfileRow } from '../render-text.js';

/** The rows the command prints (also its --json output). */
export function profilesData(opts: ProfilesOptions): { profiles: ProfileRow[]; nodes: NodeRow[] } {
  const { config, profiles } = loadInputs({ nodes: opts.nodes });
  return {
    profiles: [...profiles.values()].map((p) => ({
      name: p.name,
      recipe: p.recipe,
      status: p.status,
      runnable: p.runnable,
      description: p.description,
    })),
    nodes: Object.entries(config.nodes).map(([name, n]) => ({
      name,
      host: n.host,
      ssh: n.ssh ?? null,
      protected: n.protected,
      gatewayUrl: n.gatewayUrl,
    })),
  };
}

/** Print the profiles and the nodes. */
export async function run(opts: ProfilesOptions): Promise<number> {
  const data = profilesData(opts);
  process.stdout.write(opts.json ? `${JSON.stringify(data, null, 2)}\n` : profilesText(data.profiles, data.nodes));
  return 0;
}
