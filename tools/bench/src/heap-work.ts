/**
 * What the timed turns cost the garbage collector, from V8's own GC profiler (`v8.GCProfiler`, Node ≥ 19.6):
 * the bytes allocated per turn, and the collections they caused. Unlike time, allocation does not depend on how
 * busy the machine is, so it compares two versions of the code on a noisy machine; the collections are what
 * turns an allocation into a slow turn (a scavenge stops the main thread ~1–3 ms here; a major collection's
 * marking runs on helper threads, which `cpu` counts).
 */
import { GCProfiler, getHeapStatistics } from 'node:v8';

export interface HeapWork {
  /** Bytes allocated per turn, in KB (the heap's growth between collections plus what each one freed). */
  allocatedKb: number;
  /** Young-generation collections (scavenges) per 100 turns. */
  minorPer100: number;
  /** Full collections (mark-sweep-compact) in the timed turns. */
  major: number;
  /** Time the collections took per turn, ms (pauses of the main thread and the marking steps it ran). */
  gcMs: number;
}

interface GcStatistic {
  gcType: string;
  cost: number;
  beforeGC: { heapStatistics: { usedHeapSize: number } };
  afterGC: { heapStatistics: { usedHeapSize: number } };
}

export interface HeapWorkMeter {
  stop(turns: number): HeapWork | undefined;
}

export function startHeapWork(): HeapWorkMeter {
  const profiler = new GCProfiler();
  const usedAtStart = getHeapStatistics().used_heap_size;
  profiler.start();
  return {
    stop(turns) {
      const usedAtEnd = getHeapStatistics().used_heap_size;
      const result = profiler.stop() as { statistics: GcStatistic[] } | undefined;
      if (!result || turns === 0) return undefined;
      let allocated = 0;
      let used = usedAtStart;
      let minor = 0;
      let major = 0;
      let costUs = 0;
      for (const gc of result.statistics) {
        allocated += Math.max(0, gc.beforeGC.heapStatistics.usedHeapSize - used);
        used = gc.afterGC.heapStatistics.usedHeapSize;
        costUs += gc.cost;
        if (gc.gcType === 'Scavenge' || gc.gcType === 'MinorMarkCompact' || gc.gcType === 'MinorMarkSweep')
          minor++;
        else if (gc.gcType === 'MarkSweepCompact') major++;
      }
      allocated += Math.max(0, usedAtEnd - used);
      return {
        allocatedKb: allocated / 1024 / turns,
        minorPer100: (minor * 100) / turns,
        major,
        gcMs: costUs / 1000 / turns,
      };
    },
  };
}
