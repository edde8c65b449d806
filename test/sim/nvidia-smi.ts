/**
 * The simulated `nvidia-smi` of a GB10 node: the compute processes are the live containers the real engine started
 * with the GPU (gpu.ts: recorded by the stand-in GPU hook), unless the node's control hides them (spark2 did not
 * always list the vLLM container). Inside a container (the hook shows it there as /usr/bin/nvidia-smi) it lists
 * none: a container's pid namespace hides the host's processes, as the real one shows.
 */
import { readControl } from './control.js';
import { gpuProcesses } from './gpu.js';

const stateDir = process.env.SIM_STATE ?? '';
const GPU = 'NVIDIA GB10';
const UUID = 'GPU-5a1c9e2f-7b3d-4e8a-9c0f-1d2e3f4a5b6c';

function apps(): { pid: number; name: string; mib: number }[] {
  if (process.env.SIM_IN_CONTAINER === '1' || readControl(stateDir).nvidiaSmiHidesContainers) return [];
  return gpuProcesses(stateDir).map((r) => ({ pid: r.pid, name: r.args[0] === 'vllm' ? 'VLLM::EngineCore' : (r.args[0] ?? 'app'), mib: 98304 }));
}

/** Prints like nvidia-smi for -L, --query-compute-apps and the default table. */
function main(argv: string[]): number {
  if (argv.includes('-L') || argv.includes('--list-gpus')) {
    console.log(`GPU 0: ${GPU} (UUID: ${UUID})`);
    return 0;
  }
  const query = argv.find((a) => a.startsWith('--query-compute-apps='));
  if (query) {
    const fields = query.slice(query.indexOf('=') + 1).split(',');
    const noheader = argv.some((a) => a.startsWith('--format=') && a.includes('noheader'));
    const nounits = argv.some((a) => a.startsWith('--format=') && a.includes('nounits'));
    if (!noheader) console.log(fields.map((f) => (f === 'used_memory' ? 'used_gpu_memory [MiB]' : f)).join(', '));
    for (const a of apps()) {
      const value = (f: string) => (f === 'pid' ? String(a.pid) : f === 'process_name' ? a.name : f === 'used_memory' || f === 'used_gpu_memory' ? (nounits ? `${a.mib}` : `${a.mib} MiB`) : f === 'gpu_uuid' ? UUID : '[N/A]');
      console.log(fields.map(value).join(', '));
    }
    return 0;
  }
  if (argv.length > 0) {
    process.stderr.write(`nvidia-smi (pulse simulator): unsupported arguments: ${argv.join(' ')}\n`);
    return 2;
  }
  console.log(`+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 580.95.05              Driver Version: 580.95.05      CUDA Version: 13.0     |
|   0  ${GPU}                    On  |   0000000F:01:00.0 Off |                  N/A |
+-----------------------------------------------------------------------------------------+
| Processes:                                                                              |
|  GPU   GI   CI              PID   Type   Process name                        GPU Memory |`);
  const list = apps();
  if (!list.length) console.log('|  No running processes found                                                             |');
  for (const a of list) console.log(`|    0   N/A  N/A      ${String(a.pid).padStart(7)}      C   ${a.name.padEnd(36)} ${String(a.mib).padStart(7)}MiB |`);
  console.log('+-----------------------------------------------------------------------------------------+');
  return 0;
}

process.exitCode = main(process.argv.slice(2));
