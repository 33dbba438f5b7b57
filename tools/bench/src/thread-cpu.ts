/**
 * CPU time per turn, split into the main thread (which runs the turn) and V8's helper threads (optimizing
 * compiler, concurrent GC marking, parallel scavenges).
 *
 * Why not `process.cpuUsage()` per turn: Linux accounts a thread running on another core only at its
 * scheduler tick (4 ms at HZ=250) or when it stops, while the calling thread is accounted exactly. A helper
 * thread compiling through several turns therefore shows up in one turn as a 4 ms lump and in the others as
 * nothing: with one other thread busy, 1 ms windows of the main thread read p50 1.0 ms and p95 5.0 ms of
 * process CPU (mean 2.0, which is right). Per turn that makes the all-threads CPU p95 an artifact of the
 * tick. So the main thread is read exactly per turn — `process.threadCpuUsage()` where Node has it (≥ 23.9),
 * on Linux otherwise the process's CPU minus the other threads' `/proc/self/task/<tid>/schedstat`, which
 * lag in the same way and cancel — and the helper threads in aggregate over the timed turns, where the
 * lumps even out. Undefined where neither is there (macOS, Windows on Node 20).
 */
import { closeSync, openSync, readdirSync, readSync } from 'node:fs';

export interface CpuReading {
  /** CPU time of the main thread so far, ms. */
  mainMs: number;
  /** CPU time of every other thread so far, ms (exact only when summed over many turns). */
  helpersMs: number;
}

export interface ThreadCpu {
  mainMs: number;
  otherMs: number;
}

const threadCpuUsage = (process as { threadCpuUsage?: () => NodeJS.CpuUsage }).threadCpuUsage?.bind(process);
const ms = (usage: NodeJS.CpuUsage) => (usage.user + usage.system) / 1000;
const LIST_EVERY = 100;

/** Reads the CPU time of the main thread and of the other threads of this process. */
export class CpuMeter {
  /** Open `schedstat` files of the other threads, by thread id (re-read from offset 0 each time). */
  readonly #files = new Map<string, number>();
  readonly #buffer = Buffer.alloc(128);
  #helpersAvailable = true;
  /** The other threads' ids, listed again every LIST_EVERY readings (V8 starts its helpers early). */
  #tids: string[] = [];
  #readings = 0;

  /**
   * Undefined where this platform cannot split the main thread from the others. Reading the other threads
   * costs the main thread ~0.03 ms: a reading before a turn reads them first and one after a turn last, so
   * that cost falls outside the turn's main-thread CPU.
   */
  read(when: 'before' | 'after'): CpuReading | undefined {
    if (threadCpuUsage) {
      const all = ms(process.cpuUsage());
      const main = ms(threadCpuUsage());
      return { mainMs: main, helpersMs: all - main };
    }
    if (!this.#helpersAvailable) return undefined;
    const before = when === 'before' ? this.#helpersMs() : undefined;
    const all = ms(process.cpuUsage());
    const helpers = before ?? this.#helpersMs();
    if (helpers === undefined) {
      this.#helpersAvailable = false;
      return undefined;
    }
    return { mainMs: all - helpers, helpersMs: helpers };
  }

  close(): void {
    for (const fd of this.#files.values()) closeSync(fd);
    this.#files.clear();
  }

  #helpersMs(): number | undefined {
    if (this.#readings++ % LIST_EVERY === 0) {
      try {
        const main = String(process.pid);
        this.#tids = readdirSync('/proc/self/task').filter((tid) => tid !== main);
      } catch {
        return undefined;
      }
    }
    let ns = 0;
    for (const tid of this.#tids) {
      try {
        let fd = this.#files.get(tid);
        if (fd === undefined) {
          fd = openSync(`/proc/self/task/${tid}/schedstat`, 'r');
          this.#files.set(tid, fd);
        }
        const n = readSync(fd, this.#buffer, 0, this.#buffer.length, 0);
        // The first field is the time the thread has run, in ns.
        ns += Number(this.#buffer.toString('latin1', 0, n).split(' ')[0]);
      } catch {
        // The thread ended meanwhile: its time is no longer listed (a helper thread rarely ends).
        const fd = this.#files.get(tid);
        if (fd !== undefined) closeSync(fd);
        this.#files.delete(tid);
      }
    }
    return ns / 1e6;
  }
}

/** CPU per thread group between two readings, per turn. */
export function perTurn(
  before: CpuReading | undefined,
  after: CpuReading | undefined,
  turns: number,
): ThreadCpu | undefined {
  if (!before || !after || turns === 0) return undefined;
  return {
    mainMs: (after.mainMs - before.mainMs) / turns,
    otherMs: (after.helpersMs - before.helpersMs) / turns,
  };
}
