import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './run.js';

let dataDir: string;
let output: { code: number | null; stdout: string; stderr: string };

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'kioku-tour-'));
  // No OPENAI_API_KEY / OPENAI_BASE_URL and no stdin: the offline tour runs and ends by itself.
  output = await runCli([], { env: { KIOKU_DATA_DIR: dataDir } });
});
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

describe('offline tour (child process)', () => {
  it('announces the scripted model and finishes', () => {
    expect(output.stderr).toBe('');
    expect(output.code).toBe(0);
    expect(output.stdout).toContain('SCRIPTED local model');
    expect(output.stdout).toContain('Tour finished.');
  });

  it('recalls the preference in the second session, after the restart', () => {
    const [before, after] = output.stdout.split('↻ Restart');
    expect(before).toContain('⚙ create_memory(');
    expect(after).toContain('kioku › You prefer metric units');
    expect(after).toMatch(/injected: facts \d+ \(1\)/);
  });

  it('creates and advances a plan', () => {
    expect(output.stdout).toContain('⚙ create_plan(');
    expect(output.stdout).toMatch(/● 1\. Read server\.log/);
    expect(output.stdout).toMatch(/○ 3\. Draft the report/);
  });

  it('offloads the large tool output and retrieves it by its ref', () => {
    const ref = /→ \[MemoryRef: (\w+) - read_file output/.exec(output.stdout);
    expect(ref).not.toBeNull();
    expect(output.stdout).toContain(`⚙ retrieve_memory({"id":"${ref![1]}"})`);
    expect(output.stdout).toContain('server.log has 6 errors');
  });

  it('refuses a path outside the sandbox', () => {
    expect(output.stdout).toMatch(/outside the sandbox/);
  });

  it('lets working memory expire', () => {
    expect(output.stdout).toContain('My working memory still lists error_count.');
    expect(output.stdout).toContain('⏩ The tour moves its clock 6 minutes forward.');
    expect(output.stdout).toContain('the error_count note expired');
  });

  it('learns the sandbox handbook and answers from the chunk Kioku injected', () => {
    const step = output.stdout.split('7. Knowledge documents')[1]!.split('8. Hybrid recall')[0]!;
    expect(step).toMatch(/Learnt "Team handbook" from handbook\.md: 5 chunks, \d+ tokens\./);
    // Three of the five chunks, the one with the answer first; the answer quotes it. (The order of the
    // weaker two follows fusion weights, so only the first is pinned.)
    expect(step).toMatch(
      /\[STATIC_KNOWLEDGE\] injected, best first: Team handbook \(from file:handbook\.md\) \(part 1\)( · Team handbook \(from file:handbook\.md\) \(part [2-5]\)){2}\n/,
    );
    expect(step).toContain(
      'kioku › The handbook Kioku injected says: "A deploy on a Friday needs a written approval from the head of platform, Ingrid Svensson',
    );
    expect(step).toMatch(/knowledge \d+ \(3\)/);
  });

  it('recalls a fact for a misspelt question through hybrid recall, and says what the embedder is', () => {
    expect(output.stdout).toContain('Embeddings: HashingEmbedder, offline and LEXICAL, not semantic');
    expect(output.stdout).toMatch(
      /Vectors rebuilt with kioku-hashing-v1:d256:n3:w0\.5: facts 1, documents 0, details 1\./,
    );
    const step = output.stdout.split('8. Hybrid recall')[1]!;
    expect(step).toContain(
      'search "Do we use kuberntes?": lexical alone finds 0 facts; hybrid (lexical + vectors) finds\n    User deploys everything with Kubernetes',
    );
    // The fact is in the prompt once: recall found it and left it to the [DYNAMIC_MEMORY] block.
    expect(step).toContain(
      '  Recall found it too, and left it out: the [DYNAMIC_MEMORY] block already holds it.\nkioku › Yes — you deploy everything with Kubernetes',
    );
    expect(step).toContain('it would not\nrelate "car" to "automobile"');
  });

  it('dreams: the merge is shown as a diff first, applied on request, then reverted exactly', () => {
    const step = output.stdout.split('9. The dream')[1]!.split('Facts about tour-user:')[0]!;
    expect(step).toMatch(
      /\(consolidation\) for tour-user\/demo-agent, proposed: 1 to create, 0 to update, 2 to delete/,
    );
    expect(step).toContain('reason: Two entries about the same deployment platform');
    const diffEnd = step.indexOf('Nothing is applied yet.');
    const applied = step.indexOf('you › /dream apply');
    expect(diffEnd).toBeGreaterThan(0);
    expect(applied).toBeGreaterThan(diffEnd);
    expect(step).toMatch(/Applied changeset (\w+): 3 changes\. \/revert \1 undoes it\./);
    expect(step).toContain('User deploys everything with Kubernetes, production clusters included');
    expect(step).toMatch(/Reverted changeset \w+: 3 changes undone\./);
    // After the revert, both original entries are back.
    const final = output.stdout.split('Facts about tour-user:')[1]!;
    expect(final).toContain('User deploys everything with Kubernetes\n');
    expect(final).toContain('Production clusters run on Kubernetes');
  });

  it('prints what Kioku injected each turn', () => {
    expect(output.stdout.match(/injected: facts/g)?.length).toBeGreaterThanOrEqual(8);
    expect(output.stdout).toMatch(/working-memory \d+ \(1\)/);
  });
});

describe('offline tour on SQLite (facts, sessions) beside JSON', () => {
  it('tells the same story on another backend', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'kioku-tour-sqlite-'));
    try {
      const result = await runCli(['--facts', 'sqlite', '--sessions', 'sqlite'], {
        env: { KIOKU_DATA_DIR: dir },
      });
      expect(result.code).toBe(0);
      expect(result.stdout).toContain(
        'stores: facts=sqlite, documents=json, plans=json, working=json, sessions=sqlite, details=json',
      );
      expect(result.stdout.split('↻ Restart')[1]).toContain('kioku › You prefer metric units');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
