// CPU seconds of a process from /proc/<pid>/stat, as the benchmark counts the keeper's, its own
// and its command spawners'.
import fs from 'node:fs';

const CLK_TCK = 100; // Linux USER_HZ: /proc/<pid>/stat times are in 1/100 s

function procStat(pid: number): string[] {
  // Fields after the parenthesised command name (which may hold spaces): utime and stime are the
  // 12th and 13th, cutime and cstime the 14th and 15th.
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** The process's own user + system time. */
export function cpuSeconds(pid: number): number {
  const f = procStat(pid);
  return (Number(f[11]) + Number(f[12])) / CLK_TCK;
}

/** User + system time of the process's children that have ended and been waited for. */
export function childrenCpuSeconds(pid: number): number {
  const f = procStat(pid);
  return (Number(f[13]) + Number(f[14])) / CLK_TCK;
}
