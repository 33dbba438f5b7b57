#!/usr/bin/env node
// Prints the tests that failed in this run, from the JSON results each package's vitest wrote
// (vitest.shared.ts), at the end of CI's log: with many packages tested in parallel, a failure is
// otherwise hundreds of lines above the summary. Usage: node .ci/failed-tests.mjs <root> <since-epoch-ms>
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const [root = '.', sinceText = '0'] = process.argv.slice(2);
const since = Number(sinceText);
/** Lines of each failure message worth reading in a log. */
const MESSAGE_LINES = 25;

let failures = 0;
for (const group of ['packages', 'apps', 'tools']) {
  const dir = path.join(root, group);
  if (!existsSync(dir)) continue;
  for (const name of readdirSync(dir)) {
    const file = path.join(dir, name, 'node_modules', '.vitest', 'results.json');
    // Results older than this run are an earlier run's (or a cache hit's): not this run's failures.
    if (!existsSync(file) || statSync(file).mtimeMs < since) continue;
    const results = JSON.parse(readFileSync(file, 'utf8'));
    for (const suite of results.testResults ?? []) {
      const where = path.relative(root, suite.name);
      const failed = (suite.assertionResults ?? []).filter((t) => t.status === 'failed');
      if (suite.status === 'failed' && failed.length === 0) {
        failures++;
        print(`${where} (the file failed)`, [suite.message]);
      }
      for (const test of failed) {
        failures++;
        print(`${where} > ${test.fullName}`, test.failureMessages);
      }
    }
  }
}
if (failures === 0)
  console.log('failed-tests: no failed test in the JSON results (the failure is elsewhere above)');

function print(title, messages) {
  console.log(`\nFAILED ${title}`);
  for (const message of messages ?? []) {
    console.log(
      String(message)
        .split('\n')
        // The test runner's own frames say nothing about the failure.
        .filter((line) => !/node_modules|^\s*at new Promise/.test(line))
        .slice(0, MESSAGE_LINES)
        .map((line) => `    ${line}`)
        .join('\n'),
    );
  }
}
