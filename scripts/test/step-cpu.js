// CPU time of a command and of every process it starts, for the summary of scripts/test/test.js.
//
// Where this process may create cgroups (cgroup v2, as root on Linux), each step runs in a
// cgroup of its own: its cpu.stat counts every descendant, also those that outlive their parent
// (a browser's renderers, Xvfb) and run beside other steps, and what is left when the step ends
// is stopped with it. Elsewhere the count is the rusage of the processes that were waited for
// (a browser's own children are then partly missed), and the summary says so.
// Node.js built-ins only (scripts/test/test.js runs before `npm ci`).

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The cgroup v2 folder of this process, or null where there is none to write in. */
function ownCgroup() {
  try {
    const line = fs.readFileSync('/proc/self/cgroup', 'utf8').split('\n').find((l) => l.startsWith('0::'));
    if (!line) return null;
    // mountinfo: "… <mount point> … - cgroup2 …"
    const mount = fs.readFileSync('/proc/self/mountinfo', 'utf8').split('\n')
      .map((l) => l.split(' '))
      .find((f) => f[f.indexOf('-') + 1] === 'cgroup2');
    if (!mount) return null;
    const dir = path.join(mount[4], line.slice(3).trim());
    fs.accessSync(path.join(dir, 'cgroup.procs'), fs.constants.W_OK);
    return dir;
  } catch {
    return null;
  }
}

const root = ownCgroup();
let created = 0;

/**
 * A place to count one step's CPU: { wrap(command) → command that joins it, seconds() → CPU
 * seconds so far or null, close() → stops what is left and removes it, exact }.
 */
export function cpuMeter(label) {
  if (root) {
    const dir = path.join(root, `mha-test-${process.pid}-${created += 1}-${label.replace(/[^a-z0-9]+/gi, '-').slice(0, 40)}`);
    try {
      fs.mkdirSync(dir);
      return {
        exact: true,
        // the shell joins the cgroup, then becomes the command: nothing runs outside it
        wrap: (command) => ['/bin/sh', '-c', 'echo $$ > "$0/cgroup.procs" && exec "$@"', dir, ...command],
        seconds() {
          try {
            const usage = /usage_usec (\d+)/.exec(fs.readFileSync(path.join(dir, 'cpu.stat'), 'utf8'));
            return usage ? Number(usage[1]) / 1e6 : null;
          } catch {
            return null;
          }
        },
        leftover() {
          try {
            return fs.readFileSync(path.join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
          } catch {
            return [];
          }
        },
        close() {
          const left = this.leftover();
          for (const pid of left) {
            try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
          }
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
    } catch {
      // fall through to rusage
    }
  }
  // this file as a wrapper: it waits for the command, then writes its children's CPU time
  const report = path.join(os.tmpdir(), `mha-test-cpu-${process.pid}-${created += 1}.txt`);
  return {
    exact: false,
    wrap: (command) => [process.execPath, fileURLToPath(import.meta.url), '--report', report, '--', ...command],
    seconds() {
      try {
        return Number(fs.readFileSync(report, 'utf8'));
      } catch {
        return null;
      }
    },
    leftover: () => [],
    close() {
      fs.rmSync(report, { force: true });
      return [];
    },
  };
}

/**
 * CPU seconds used by the finished children of this process (Linux: cutime + cstime of
 * /proc/self/stat, in clock ticks of 1/100 s), or null.
 */
export function childCpuSeconds() {
  try {
    const stat = fs.readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // fields[0] is field 3 (state)
    return (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return null;
  }
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

// node scripts/test/step-cpu.js --report FILE -- COMMAND...: runs COMMAND, writes the CPU seconds
// of the processes it waited for to FILE, exits as COMMAND did.
if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const [flag, file, dashes, ...command] = process.argv.slice(2);
  if (flag !== '--report' || dashes !== '--' || command.length === 0) {
    console.error('usage: node scripts/test/step-cpu.js --report FILE -- COMMAND...');
    process.exit(2);
  }
  const result = spawnSync(command[0], command.slice(1), { stdio: 'inherit' });
  fs.writeFileSync(file, String(childCpuSeconds() ?? ''));
  if (result.error) {
    console.error(`${command[0]}: ${result.error.message}`);
    process.exit(127);
  }
  process.exit(result.status ?? 1);
}
