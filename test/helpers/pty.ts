/**
 * Runs a program on a pseudo-terminal of a given size (python3's pty module) and returns every byte it wrote, for
 * test/helpers/term.ts to rebuild the screen; optionally sends Ctrl-C (SIGINT to its process group, as a terminal
 * does) once its output matches, and returns its exit code.
 */
import { spawn, spawnSync } from 'node:child_process';

const PTY_RUN = `
import os, pty, sys, struct, fcntl, termios, time, select, signal, re
cols, rows, pattern, count = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
pid, fd = pty.fork()
if pid == 0:
    fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack('HHHH', rows, cols, 0, 0))
    os.execvp(sys.argv[5], sys.argv[5:])
out = b''
sent = False
while True:
    r, _, _ = select.select([fd], [], [], 0.2)
    if r:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    if pattern and not sent and len(re.findall(pattern.encode(), out)) >= count:
        os.write(fd, b'\\x03')
        sent = True
_, status = os.waitpid(pid, 0)
sys.stdout.buffer.write(out)
sys.stderr.write('EXIT %d' % (os.waitstatus_to_exitcode(status)))
`;

export const hasPty = spawnSync('python3', ['-c', 'import pty']).status === 0;

export interface PtyRun {
  /** Every byte the program wrote to the terminal (a pty turns \n into \r\n). */
  output: string;
  /** Its exit code (negative: killed by that signal). */
  code: number;
}

/**
 * Runs argv in a pty of `cols`×`rows`; with `interrupt`, types Ctrl-C once the output has matched it `times` times.
 */
export function runInPty(cols: number, rows: number, argv: string[], env: NodeJS.ProcessEnv, opts: { interrupt?: RegExp; times?: number; timeoutMs?: number } = {}): Promise<PtyRun> {
  return new Promise((resolve, reject) => {
    const child = spawn('python3', ['-c', PTY_RUN, String(cols), String(rows), opts.interrupt?.source ?? '', String(opts.times ?? 1), ...argv], { env });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (err += d.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 120_000);
    child.on('error', reject);
    child.on('close', () => {
      clearTimeout(timer);
      const m = /EXIT (-?\d+)$/.exec(err);
      if (!m) reject(new Error(`the pty runner failed: ${err}`));
      else resolve({ output: out, code: Number(m[1]) });
    });
  });
}
