/**
 * `bench:recall --embedder sentence`: a model embeds each distinct text once per run, however many rows
 * (weights, pools) fuse its vectors, and the questions are embedded in batches before the rows run, so a
 * row's search latency is the fusion's and the model's own time per query is measured apart
 * (`embedLatency`). `--embed-cache FILE` keeps the vectors between runs (for grids; the file holds vectors
 * of LoCoMo's texts: keep it outside the repository).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import type { Embedder } from '@kioku/core';
import { percentile, round } from './util.js';

export class MemoEmbedder implements Embedder {
  readonly modelId: string;
  readonly dimensions: number;
  readonly fusionWeight: number | undefined;
  readonly #inner: Embedder;
  readonly #vectors = new Map<string, number[]>();
  readonly #file: string | undefined;
  /** Time spent in the model, and texts it embedded. */
  embedMs = 0;
  embedded = 0;

  constructor(inner: Embedder, file?: string) {
    this.#inner = inner;
    this.modelId = inner.modelId;
    this.dimensions = inner.dimensions;
    this.fusionWeight = inner.fusionWeight;
    this.#file = file;
    if (file && existsSync(file)) {
      const saved = JSON.parse(readFileSync(file, 'utf8')) as {
        model: string;
        vectors: [string, number[]][];
      };
      if (saved.model === inner.modelId)
        for (const [text, vector] of saved.vectors) this.#vectors.set(text, vector);
    }
  }

  async embed(texts: readonly string[]): Promise<number[][]> {
    const missing = [...new Set(texts.filter((t) => !this.#vectors.has(t)))];
    const batch = this.#inner.maxBatchSize ?? 32;
    for (let start = 0; start < missing.length; start += batch) {
      const slice = missing.slice(start, start + batch);
      const t0 = performance.now();
      const vectors = await this.#inner.embed(slice);
      this.embedMs += performance.now() - t0;
      this.embedded += slice.length;
      for (const [i, text] of slice.entries()) this.#vectors.set(text, vectors[i]!);
    }
    return texts.map((t) => this.#vectors.get(t)!);
  }

  save(): void {
    if (this.#file)
      writeFileSync(this.#file, JSON.stringify({ model: this.modelId, vectors: [...this.#vectors] }));
  }

  /** The model's time for one query alone (no cache), p50 / p95 over `texts`. */
  async embedLatency(texts: readonly string[]): Promise<{ p50: number; p95: number; n: number }> {
    await this.#inner.embed([texts[0] ?? 'warm-up']);
    const times: number[] = [];
    for (const text of texts) {
      const t0 = performance.now();
      await this.#inner.embed([text]);
      times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    return { p50: round(percentile(times, 50), 1), p95: round(percentile(times, 95), 1), n: times.length };
  }
}
