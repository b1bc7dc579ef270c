// Reads a process's memory and CPU counters from /proc (Linux only).
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

let clkTck = 100;
try {
  clkTck = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
} catch {
  // keep 100, the Linux default
}

/** { rssMB, hwmMB } from /proc/<pid>/status (VmRSS, VmHWM), or nulls when unreadable. */
export function memOf(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (key) => {
      const m = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status);
      return m ? Number(m[1]) : NaN;
    };
    return { rssMB: kb('VmRSS') / 1024, hwmMB: kb('VmHWM') / 1024 };
  } catch {
    return { rssMB: null, hwmMB: null };
  }
}

/** User + system CPU time of a process in milliseconds (from /proc/<pid>/stat), or null. */
export function cpuMsOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may contain spaces: fields are counted after the closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    return ((utime + stime) * 1000) / clkTck;
  } catch {
    return null;
  }
}

/**
 * CPU time of a process in milliseconds at nanosecond resolution: the sum of the first field
 * (time spent on the CPU, ns) of `/proc/<pid>/task/<tid>/schedstat` over its live threads —
 * `/proc/<pid>/stat` counts in clock ticks (10 ms), too coarse for a window of a few turns.
 * Threads that already exited are not counted (the gateway's threads are long-lived). Falls back
 * to {@link cpuMsOf} when schedstat is unavailable; null when the process is gone.
 */
export function cpuMsPrecise(pid) {
  try {
    let ns = 0;
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
      } catch {
        // the thread exited meanwhile
      }
    }
    return Number.isFinite(ns) && ns > 0 ? ns / 1e6 : cpuMsOf(pid);
  } catch {
    return cpuMsOf(pid);
  }
}

/** This process's own CPU time in milliseconds. */
export function selfCpuMs() {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/** Machine-wide busy CPU time (all CPUs, all processes) in milliseconds, from /proc/stat. */
export function machineBusyMs() {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0];
    const v = line.trim().split(/\s+/).slice(1).map(Number);
    const [user, nice, system, _idle, _iowait, irq, softirq, steal] = v;
    return ((user + nice + system + irq + softirq + (steal ?? 0)) * 1000) / clkTck;
  } catch {
    return null;
  }
}

/** The 1-minute load average. */
export function loadAvg1() {
  try {
    return Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
  } catch {
    return null;
  }
}
