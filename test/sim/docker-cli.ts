/**
 * The simulated `docker` executable (installed per node as a shim that sets SIM_DOCKER_DIR and SIM_STATE).
 * Supports what the node scripts use; anything else exits 125 with a clear message, never a silent success.
 */
import path from 'node:path';
import { appendJsonLine, readControl } from './control.js';
import { DockerExit, takeOption } from './docker-args.js';
import { TemplateError } from './docker-format.js';
import { dockerExec } from './docker-exec.js';
import { imageCommand } from './docker-image.js';
import { kill, pause, rm, stop, wait } from './docker-lifecycle.js';
import { inspect, ps } from './docker-query.js';
import { logs } from './docker-logs.js';
import { readImages } from './docker-state.js';
import { dockerRun } from './docker-run.js';

const dockerDir = process.env.SIM_DOCKER_DIR ?? '';
const stateDir = process.env.SIM_STATE ?? '';

async function dispatch(argv: string[]): Promise<number> {
  const [cmd = '', ...args] = argv;
  switch (cmd) {
    case 'run':
      return dockerRun(dockerDir, stateDir, args);
    case 'exec':
      return dockerExec(dockerDir, stateDir, args);
    case 'ps':
      return ps(dockerDir, args);
    case 'inspect':
      return inspect(dockerDir, args, 'object');
    case 'logs':
      return logs(dockerDir, args);
    case 'rm':
      return rm(dockerDir, stateDir, args);
    case 'stop':
      return stop(dockerDir, args);
    case 'kill':
      return kill(dockerDir, args);
    case 'wait':
      return wait(dockerDir, args);
    case 'pause':
    case 'unpause':
      return pause(dockerDir, args, cmd === 'unpause');
    case 'container': {
      // `docker container X` is the container-only form of each command (inspect never matches an image there).
      const [sub = '', ...rest] = args;
      const alias: Record<string, string> = { ls: 'ps', list: 'ps', inspect: 'container-inspect', remove: 'rm' };
      if (!['ls', 'list', 'ps', 'inspect', 'logs', 'rm', 'remove', 'stop', 'kill', 'wait', 'pause', 'unpause', 'run', 'exec'].includes(sub)) {
        throw new DockerExit(`docker container ${sub}: not supported by the pulse docker simulator`, 125);
      }
      return dispatch([alias[sub] ?? sub, ...rest]);
    }
    case 'container-inspect':
      return inspect(dockerDir, args, 'container');
    case 'image':
    case 'images':
      return imageCommand(readImages(dockerDir), cmd === 'images' ? ['ls', ...args] : args);
    case 'version':
      console.log(takeOption(args, ['--format', '-f']) ? '28.3.3' : 'Client: 28.3.3 (pulse simulator)\nServer: 28.3.3 (pulse simulator)');
      return 0;
    default:
      throw new DockerExit(`docker: '${argv.join(' ')}' is not supported by the pulse docker simulator`, 125);
  }
}

/** Entry point: runs one docker command and exits with docker's exit code. */
async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (stateDir) appendJsonLine(path.join(stateDir, 'docker-calls.jsonl'), { at: new Date().toISOString(), argv });
  try {
    const slow = stateDir ? readControl(stateDir).dockerSlowMs : 0;
    if (slow > 0) await new Promise((r) => setTimeout(r, slow)); // a busy daemon: the CLI waits for its answer
    if (stateDir && readControl(stateDir).dockerDown) {
      throw new DockerExit('Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?', 1);
    }
    process.exitCode = await dispatch(argv);
  } catch (err) {
    if (err instanceof DockerExit || err instanceof TemplateError) {
      process.stderr.write(`${err.message}\n`);
      process.exitCode = err instanceof DockerExit ? err.code : 1;
    } else throw err;
  }
}

await main();
