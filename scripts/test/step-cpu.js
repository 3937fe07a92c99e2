// CPU time of a step of scripts/test/test.js and of every process it starts. Where this process
// may create cgroups (cgroup v2, as root on Linux), a step runs in a cgroup of its own: its
// cpu.stat counts every descendant, also those that outlive their parent (a browser's renderers,
// Xvfb), and what is left when the step ends is stopped with it. Elsewhere there is no count.
// Node.js built-ins only (scripts/test/test.js runs before `npm ci`).

import fs from 'node:fs';
import path from 'node:path';

/** The cgroup v2 folder of this process, or null where there is none to write in. */
function ownCgroup() {
  try {
    const line = fs.readFileSync('/proc/self/cgroup', 'utf8').split('\n').find((l) => l.startsWith('0::'));
    // mountinfo: "… <mount point> … - cgroup2 …"
    const mount = fs.readFileSync('/proc/self/mountinfo', 'utf8').split('\n').map((l) => l.split(' ')).find((f) => f[f.indexOf('-') + 1] === 'cgroup2');
    if (!line || !mount) return null;
    const dir = path.join(mount[4], line.slice(3).trim());
    fs.accessSync(path.join(dir, 'cgroup.procs'), fs.constants.W_OK);
    return dir;
  } catch {
    return null;
  }
}

const root = ownCgroup();
let created = 0;
const nothing = { wrap: (command) => command, seconds: () => null, close: () => [] };

/** A place to count one step's CPU: { wrap(command) → the command run in it, seconds() → CPU seconds or null, close() → the pids it stopped }. */
export function cpuMeter(label) {
  if (!root) return nothing;
  const dir = path.join(root, `mha-test-${process.pid}-${created += 1}-${label.replace(/[^a-z0-9]+/gi, '-').slice(0, 40)}`);
  try {
    fs.mkdirSync(dir);
  } catch {
    return nothing;
  }
  const procs = () => fs.readFileSync(path.join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
  return {
    // the shell joins the cgroup, then becomes the command: nothing runs outside it
    wrap: (command) => ['/bin/sh', '-c', 'echo $$ > "$0/cgroup.procs" && exec "$@"', dir, ...command],
    seconds() {
      const usage = /usage_usec (\d+)/.exec(fs.readFileSync(path.join(dir, 'cpu.stat'), 'utf8'));
      return usage ? Number(usage[1]) / 1e6 : null;
    },
    close() {
      const left = procs();
      for (const pid of left) {
        try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
      }
      // a killed process leaves the cgroup a moment later
      for (let k = 0; k < 50; k += 1) {
        try {
          fs.rmdirSync(dir);
          break;
        } catch {
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
        }
      }
      return left;
    },
  };
}

/** CPU seconds the whole machine spent busy since boot (/proc/stat), or null. */
export function machineBusySeconds() {
  try {
    const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal
    return (f[0] + f[1] + f[2] + f[5] + f[6] + f[7]) / 100;
  } catch {
    return null;
  }
}
