/**
 * CPU time per thread of this process, from Linux's `/proc/self/task/<tid>/stat` (utime + stime, in
 * clock ticks of 10 ms: fine over hundreds of turns, not for one). `process.cpuUsage()` sums every thread,
 * so a turn's "cpu" can exceed its wall time while V8's helper threads compile hot code (TurboFan) or
 * help the garbage collector; this splits the main thread (whose id is the process id) from the others.
 * Undefined where `/proc` is not there (macOS, Windows).
 */
import { readdirSync, readFileSync } from 'node:fs';

const TICK_MS = 10;

export interface ThreadCpu {
  mainMs: number;
  otherMs: number;
}

export function threadCpu(): ThreadCpu | undefined {
  let tasks: string[];
  try {
    tasks = readdirSync('/proc/self/task');
  } catch {
    return undefined;
  }
  const main = String(process.pid);
  const cpu = { mainMs: 0, otherMs: 0 };
  for (const tid of tasks) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // the thread ended meanwhile
    }
    // Fields after the command name (which may hold spaces, in parentheses): utime is the 12th, stime the 13th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ms = (Number(fields[11]) + Number(fields[12])) * TICK_MS;
    if (tid === main) cpu.mainMs += ms;
    else cpu.otherMs += ms;
  }
  return cpu;
}

/** CPU per thread group between two readings, per turn. */
export function perTurn(
  before: ThreadCpu | undefined,
  after: ThreadCpu | undefined,
  turns: number,
): ThreadCpu | undefined {
  if (!before || !after || turns === 0) return undefined;
  return {
    mainMs: (after.mainMs - before.mainMs) / turns,
    otherMs: (after.otherMs - before.otherMs) / turns,
  };
}
