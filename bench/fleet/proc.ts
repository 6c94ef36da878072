// What /proc says about a process: CPU seconds and resident memory. Read before and after a run,
// the difference is what the process spent on it, whatever it was doing.
import fs from 'node:fs';

const CLK_TCK = 100; // Linux USER_HZ: /proc/<pid>/stat times are in 1/100 s

export interface CpuTimes {
  /** utime + stime: the process itself. */
  self: number;
  /** cutime + cstime: its children that exited and were waited for (a soul's dpkg-query, a keeper's git). */
  children: number;
}

/** CPU seconds of a live process; zeros for one that is gone (its last figures are lost with it). */
export function cpuTimes(pid: number): CpuTimes {
  let stat: string;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return { self: 0, children: 0 };
  }
  // Fields after the parenthesised command name (which may hold spaces): utime, stime, cutime and
  // cstime are the 12th to 15th.
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { self: (Number(f[11]) + Number(f[12])) / CLK_TCK, children: (Number(f[13]) + Number(f[14])) / CLK_TCK };
}

export function sumCpu(pids: number[]): CpuTimes {
  const out = { self: 0, children: 0 };
  for (const pid of pids) {
    const t = cpuTimes(pid);
    out.self += t.self;
    out.children += t.children;
  }
  return out;
}

/** VmRSS in MB (MiB), or NaN for a process that is gone. */
export function rssMb(pid: number): number {
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb === undefined ? NaN : Number(kb) / 1024;
  } catch {
    return NaN;
  }
}

/** The command name (/proc/<pid>/comm): tells the soul's node from the `sh` that execs it. */
export function commOf(pid: number): string | undefined {
  try {
    return fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** PIDs of every process whose command name is `comm` (e.g. all PostgreSQL backends). */
export function pidsNamed(comm: string): number[] {
  return fs
    .readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number)
    .filter((pid) => commOf(pid) === comm);
}

/** CPU seconds the whole machine spent busy (every core, /proc/stat: all but idle and iowait). */
export function machineBusySeconds(): number {
  const cpu = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const [user, nice, system, , , irq, softirq, steal] = cpu;
  return (user! + nice! + system! + irq! + softirq! + (steal ?? 0)) / CLK_TCK;
}
