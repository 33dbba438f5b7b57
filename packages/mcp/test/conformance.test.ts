import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { promisify, stripVTControlCharacters } from 'node:util';
import { describe, expect, it } from 'vitest';
import { startHttp } from './helpers.js';

const run = promisify(execFile);
const bin = path.join(
  path.dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/conformance/package.json')),
  'dist/index.js',
);

/**
 * The scenarios of the MCP conformance suite that apply to a memory server. The others need the suite's
 * fixture server (tools such as test_simple_text, prompts, logging, completion, subscriptions, sampling
 * and elicitation), which Kioku does not and should not have; server-sse-* need sessions (this server is
 * stateless). The suite connects without credentials, so it runs against the loopback, single-user mode.
 */
const SCENARIOS = ['server-initialize', 'ping', 'tools-list', 'resources-list', 'dns-rebinding-protection'];

describe('MCP conformance (@modelcontextprotocol/conformance)', () => {
  it.each(SCENARIOS)('%s passes', async (scenario) => {
    const server = await startHttp({ auth: { identity: { userId: 'conformance' } } });
    const { stdout } = await run(
      process.execPath,
      [bin, 'server', '--url', server.url, '--scenario', scenario],
      {
        cwd: path.join(import.meta.dirname, '..'),
        timeout: 240_000, // below the 300 s test limit (vitest.shared.ts): a hung run reports first
      },
    );
    const plain = stripVTControlCharacters(stdout);
    const [, passed, total, failed] = /Passed: (\d+)\/(\d+), (\d+) failed/.exec(plain) ?? [];
    expect(Number(failed), plain).toBe(0);
    expect(Number(passed), plain).toBe(Number(total));
    expect(Number(total)).toBeGreaterThan(0);
    expect(plain).not.toMatch(/FAILURE/);
  });
});
