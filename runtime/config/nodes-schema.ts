/**
 * The zod schema of runtime/nodes.json. Strict everywhere: an unknown key is an error, so a typo never silently
 * drops a setting. runtime/nodes.schema.json is generated from this (see nodesJsonSchema) for editors.
 */
import { z } from 'zod';
import { WORD_PATTERN, commandProblem, wordProblem } from './safe.js';
import { DRAIN_BUDGET_MAX_S, DRAIN_BUDGET_S } from '../steps/catalog.js';


const NAME_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_.-]*$';

/** A value that reaches a node unquoted: the spec's word characters only. */
function word() {
  return z.string().regex(new RegExp(WORD_PATTERN), {
    error: (iss) => (iss.input === '' ? 'must not be empty' : (wordProblem(String(iss.input)) ?? 'invalid')),
    abort: true,
  });
}

function absPath() {
  return word().refine((v) => v.startsWith('/'), { error: 'must be an absolute path (start with /)' });
}

function name(what: string) {
  return z.string().regex(new RegExp(NAME_PATTERN), {
    error: `${what} must start with a letter or digit and hold only letters, digits and _ . -`,
  });
}

const Vars = z
  .record(z.string().regex(/^[A-Za-z][A-Za-z0-9_]*$/, { error: 'a var name holds only letters, digits and _' }), word())
  .describe('Values for {{name}} in profiles and recipe dockerArgs (recipeDir is reserved).');

const NodeEnv = z
  .object({
    HF_HOME: absPath().describe('HF cache on the node; the recipe mounts it at /root/.cache/huggingface'),
    BIND: word().describe('Address the server listens on; a loopback BIND is unreachable from the gateway host'),
    PORT: z
      .string()
      .regex(/^[1-9][0-9]{0,4}$/, { error: 'expected a port number as a string, e.g. "8000"', abort: true })
      .refine((v) => Number(v) <= 65535, { error: 'expected a port number of at most 65535' }),
    REQUIRE_IDLE_GPU: word().optional(),
  })
  .strict()
  .describe('The node keys of the .env; a profile cannot set them.');

const Recipe = z
  .object({
    dir: absPath().describe('The recipe folder on the node ({{recipeDir}})'),
    start: word().describe('start.sh, absolute or relative to dir'),
    stop: word().describe('stop.sh, absolute or relative to dir'),
    container: name('container').describe("The recipe's container name"),
    dockerArgs: z
      .string()
      .optional()
      .describe('The -v/-e pairs that start.sh adds itself; a profile or overlay mount on these targets is an error'),
    vars: Vars.optional(),
  })
  .strict();

const GatewayTunnel = z
  .object({
    localPort: z
      .number()
      .int()
      .min(1)
      .max(65535)
      .describe('The port on 127.0.0.1 of the gateway host where `pulse tunnel` listens for this node: unique among the tunnels, and not the PORT of a node whose server runs on the gateway host'),
  })
  .strict()
  .describe('For a node whose BIND is loopback: `pulse tunnel` on the gateway host forwards 127.0.0.1:localPort over ssh to BIND:PORT on the node, and the gateway backend file gives the node the tunnel\'s URL (docs/GATEWAY.md)');

const Node = z
  .object({
    host: z.enum(['local', 'ssh']).describe('local (this host) or ssh'),
    ssh: z
      .string()
      .regex(/^[A-Za-z0-9_.@:-]+$/, { error: 'expected an ssh alias or user@host (letters, digits and _ . @ : -)' })
      .optional()
      .describe('The ssh target, resolved with ssh -G; required when host is ssh'),
    protected: z.boolean().default(false).describe('true: up, down, smoke and status --gpu-probe refuse without --yes'),
    env: NodeEnv,
    vars: Vars.default({}),
    gatewayUrl: z.url({ protocol: /^https?$/, error: 'expected an http:// or https:// URL' }).describe('The URL the gateway uses for this node (with gatewayTunnel: the tunnel\'s URL replaces it)'),
    gatewayTunnel: GatewayTunnel.optional(),
    gpuProbe: z
      .string()
      .refine((v) => commandProblem(v) === null, { error: (iss) => `gpuProbe ${commandProblem(String(iss.input))}` })
      .optional()
      .describe('The command that status --gpu-probe runs on the node'),
    minMemAvailableGiB: z.number().positive().optional().describe('Replaces the top-level memory gate for this node'),
    keepBackups: z.number().int().min(1).max(1000).optional().describe('Replaces the top-level keepBackups for this node'),
    drainBudgetS: z
      .number()
      .int()
      .min(0)
      .max(DRAIN_BUDGET_MAX_S)
      .optional()
      .describe('Replaces the top-level drainBudgetS for this node (0: no drain)'),
    autoRollback: z
      .boolean()
      .default(false)
      .describe('A failed or cancelled up (after its stop began) brings the previous .env back up by itself, as up --auto-rollback does'),
    recipes: z.record(name('a recipe name'), Recipe),
  })
  .strict();

/** The whole nodes.json (strict at every level; defaults for the top-level gates). */
export const NodesFileSchema = z
  .object({
    $schema: z.string().optional(),
    gatewayNode: z
      .string()
      .optional()
      .describe('The node that runs the gateway (default: the first node with host "local")'),
    minMemAvailableGiB: z.number().positive().default(100).describe('Memory gate (MemAvailable GiB) before start'),
    memTimeoutS: z.number().int().positive().default(600).describe('How long up waits for the memory gate'),
    readyGraceS: z.number().int().nonnegative().default(300).describe('Added to READY_TIMEOUT_S for the readiness wait'),
    drainBudgetS: z
      .number()
      .int()
      .min(0)
      .max(DRAIN_BUDGET_MAX_S)
      .default(DRAIN_BUDGET_S)
      .describe('How long a stop of a serving server first waits for its requests in flight to finish (vLLM /metrics); 0: no drain'),
    keepBackups: z
      .number()
      .int()
      .min(1)
      .max(1000)
      .default(10)
      .describe('How many .env backups (.env.pulse-bak-*) up keeps per recipe dir; the one last known good points to is always kept'),
    nodes: z.record(name('a node name'), Node),
  })
  .strict();

export type NodesFile = z.output<typeof NodesFileSchema>;
export type NodeConfig = NodesFile['nodes'][string];
export type RecipeConfig = NodeConfig['recipes'][string];

/** The JSON Schema of nodes.json (input side: fields with defaults are optional), for editors. */
export function nodesJsonSchema(): unknown {
  const schema = z.toJSONSchema(NodesFileSchema, { io: 'input' }) as Record<string, unknown>;
  return { ...schema, title: 'pulse runtime/nodes.json' };
}
