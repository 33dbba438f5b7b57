import path from 'node:path';
import ts from 'typescript';
import type { ReadmeExample } from './examples.js';
import { importErrorHint } from './report.js';

/** A compiler error in an example, placed at its README line. */
export interface ExampleError {
  /** `packages/core/README.md:42` */
  at: string;
  message: string;
}

/** The repository's compiler options (tsconfig.base.json: strict, NodeNext, the `@kioku/source` condition). */
function compilerOptions(root: string): ts.CompilerOptions {
  const configFile = path.join(root, 'tsconfig.base.json');
  const { config, error } = ts.readConfigFile(configFile, ts.sys.readFile);
  if (error) throw new Error(ts.flattenDiagnosticMessageText(error.messageText, '\n'));
  const parsed = ts.parseJsonConfigFileContent(config, ts.sys, root, undefined, configFile);
  return { ...parsed.options, noEmit: true, declaration: false, declarationMap: false, sourceMap: false };
}

/**
 * Compiles every example in one program, each as a module at its `file` (the files need not exist: the
 * host serves them from memory), against the packages' TypeScript source. Returns each error at the
 * README line it comes from.
 */
export function typecheckExamples(root: string, examples: readonly ReadmeExample[]): ExampleError[] {
  const byFile = new Map(examples.map((e) => [path.resolve(e.file), e]));
  if (byFile.size !== examples.length) throw new Error('Two README examples are compiled as the same file.');
  const options = compilerOptions(root);
  const host = ts.createCompilerHost(options);
  const { fileExists, readFile, getSourceFile } = host;
  host.fileExists = (file) => byFile.has(path.resolve(file)) || fileExists.call(host, file);
  host.readFile = (file) => byFile.get(path.resolve(file))?.code ?? readFile.call(host, file);
  host.getSourceFile = (file, language, ...rest) => {
    const example = byFile.get(path.resolve(file));
    if (example) return ts.createSourceFile(file, example.code, language, true, ts.ScriptKind.TS);
    return getSourceFile.call(host, file, language, ...rest);
  };
  const program = ts.createProgram([...byFile.keys()], options, host);
  const errors: ExampleError[] = [];
  for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
    const example = diagnostic.file && byFile.get(path.resolve(diagnostic.file.fileName));
    if (!diagnostic.file || !example) {
      // An error outside the examples (a package's own source, the options) fails the check too.
      const where = diagnostic.file ? path.relative(root, diagnostic.file.fileName) : 'compiler options';
      errors.push({ at: where, message: `TS${diagnostic.code}: ${message}` });
      continue;
    }
    const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start ?? 0);
    const hint = importErrorHint(diagnostic.code);
    errors.push({
      at: `${example.readme}:${example.line + line}`,
      message: `TS${diagnostic.code}: ${message}${hint ? ` (${hint})` : ''}`,
    });
  }
  return errors;
}
