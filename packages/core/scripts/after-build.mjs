// Ships the vendored o200k rank table's MIT licence beside the compiled table.
import { copyFileSync } from 'node:fs';

copyFileSync(
  new URL('../src/tokens/vendor/LICENSE-gpt-tokenizer', import.meta.url),
  new URL('../dist/tokens/vendor/LICENSE-gpt-tokenizer', import.meta.url),
);
