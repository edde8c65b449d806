/**
 * The simulator for humans: `node dist/test/sim/cli.js start --nodes 4 --dir /tmp/pulse-sim` starts the nodes,
 * writes nodes.json (the first node protected, like spark1; `--protected a,b|none` changes that) and env.sh,
 * prints the variables to export, and runs until Ctrl-C, then cleans up.
 */
import fs from 'node:fs';
import path from 'node:path';
import { startSim } from './index.js';

function arg(argv: string[], name: string): string | undefined {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
}

/** Parses the command line, starts the sim and waits for a signal. */
async function main(argv: string[]): Promise<void> {
  if (argv[0] !== 'start') {
    console.error('usage: node dist/test/sim/cli.js start [--nodes N | --names a,b] [--dir DIR] [--ready-delay-ms MS] [--protected a,b|none]');
    process.exitCode = 2;
    return;
  }
  const names = arg(argv, '--names');
  const dir = path.resolve(arg(argv, '--dir') ?? '/tmp/pulse-sim');
  // env.sh appears only when the nodes run (scripts wait for it), so an old one must not linger.
  fs.rmSync(path.join(dir, 'env.sh'), { force: true });
  const sim = await startSim({
    nodes: names ? names.split(',') : Number(arg(argv, '--nodes') ?? 2),
    dir,
    readyDelayMs: Number(arg(argv, '--ready-delay-ms') ?? 2000),
    readyPollS: 1,
  });
  const nodesJson = path.join(dir, 'nodes.json');
  const prot = arg(argv, '--protected');
  sim.writeNodesJson(nodesJson, prot === undefined ? {} : { protected: prot === 'none' ? [] : prot.split(',') });
  const env = { PULSE_SSH_CONFIG: sim.sshConfigPath, PULSE_NODES: nodesJson, PULSE_STATE_DIR: path.join(dir, 'state') };
  const exports = Object.entries(env).map(([k, v]) => `export ${k}='${v}'`).join('\n');
  fs.writeFileSync(path.join(dir, 'env.sh'), `${exports}\n`);
  console.log(`pulse simulator: ${sim.nodes.length} nodes under ${dir}`);
  for (const n of sim.nodes) console.log(`  ${n.name}: ssh ${n.address}:${n.sshPort}, vLLM port ${n.vllmPort}, recipe ${n.recipeDir}`);
  console.log(`\n${exports}\n\n(or: source ${path.join(dir, 'env.sh')}; try: ssh -F "$PULSE_SSH_CONFIG" ${sim.nodes[0]?.name} docker ps)`);
  console.log('Ctrl-C stops the simulator and every process it started.');
  const keepAlive = setInterval(() => undefined, 1 << 30);
  const shutdown = () => {
    clearInterval(keepAlive);
    void sim.stop().then(() => console.log('pulse simulator stopped'));
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}

await main(process.argv.slice(2));
