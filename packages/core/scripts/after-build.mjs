// The vendored o200k rank table is data: its 2 MB source map maps a list of tokens to itself. Drop it
// (and the comment pointing at it) so the package installs smaller; ship the table's MIT licence beside it.
import { copyFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';

const file = new URL('../dist/tokens/vendor/o200k-ranks.js', import.meta.url);
rmSync(new URL('../dist/tokens/vendor/o200k-ranks.js.map', import.meta.url), { force: true });
writeFileSync(file, readFileSync(file, 'utf8').replace(/\n\/\/# sourceMappingURL=.*\s*$/, '\n'));
copyFileSync(
  new URL('../src/tokens/vendor/LICENSE-gpt-tokenizer', import.meta.url),
  new URL('../dist/tokens/vendor/LICENSE-gpt-tokenizer', import.meta.url),
);
