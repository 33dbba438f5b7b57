#!/usr/bin/env node
// The API report of each entry point of the package in the current directory, from its built .d.ts (run
// after `build`): `api/<entry>.api.md` holds every exported name with its signature. Without `--update` it
// fails when the surface differs from the committed report; with it, it writes the report.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Extractor, ExtractorConfig } from '@microsoft/api-extractor';

const update = process.argv.includes('--update');
const projectFolder = process.cwd();
const pkg = JSON.parse(readFileSync(join(projectFolder, 'package.json'), 'utf8'));
const exportsMap = pkg.publishConfig?.exports ?? pkg.exports ?? {};
const entries = Object.entries(exportsMap).filter(([path]) => path !== './package.json');
const reportFolder = join(projectFolder, 'api');
mkdirSync(reportFolder, { recursive: true });

let failed = 0;
for (const [path, target] of entries) {
  const types = typeof target === 'string' ? undefined : target.types;
  if (!types) continue;
  const entry = path === '.' ? 'index' : path.replace(/^\.\//, '').replaceAll('/', '-');
  const dts = resolve(projectFolder, types);
  if (!existsSync(dts)) {
    console.error(`${pkg.name}: ${types} is missing; run the package's build first.`);
    failed++;
    continue;
  }
  const config = ExtractorConfig.prepare({
    configObject: {
      projectFolder,
      mainEntryPointFilePath: dts,
      compiler: { overrideTsconfig: { compilerOptions: { strict: true, skipLibCheck: true } } },
      apiReport: {
        enabled: true,
        reportFileName: `${entry}.api.md`,
        reportFolder,
        reportTempFolder: join(projectFolder, 'dist', '.api-report'),
      },
      docModel: { enabled: false },
      dtsRollup: { enabled: false },
      tsdocMetadata: { enabled: false },
      messages: {
        extractorMessageReporting: { default: { logLevel: 'none' } },
        compilerMessageReporting: { default: { logLevel: 'warning' } },
        tsdocMessageReporting: { default: { logLevel: 'none' } },
      },
    },
    configObjectFullPath: undefined,
    packageJsonFullPath: join(projectFolder, 'package.json'),
  });
  const result = Extractor.invoke(config, { localBuild: update, showVerboseMessages: false });
  if (result.apiReportChanged && !update) {
    console.error(
      `${pkg.name}${path === '.' ? '' : path.slice(1)}: the public API changed and api/${entry}.api.md does not say so.\n` +
        `  Review the change, then run \`pnpm api:update\` and commit the report (the new one is in dist/.api-report/).`,
    );
    failed++;
  } else if (!result.succeeded) {
    failed++;
  }
}
process.exit(failed ? 1 : 0);
