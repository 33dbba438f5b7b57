import { mkdir, readdir, readFile, realpath, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { defineTool, type Toolkit } from '@kioku/core';
import { z } from 'zod';

const MAX_READ_BYTES = 1024 * 1024;

/** Resolve `relative` inside `root`, refusing anything (including symlinks) that leads outside it. */
export async function resolveInSandbox(root: string, relative: string): Promise<string> {
  const base = await realpath(root);
  const target = path.resolve(base, relative);
  const real = await realpath(target).catch(() => target);
  for (const candidate of [target, real]) {
    if (candidate !== base && !candidate.startsWith(base + path.sep)) {
      throw new Error(`Refused: "${relative}" is outside the sandbox (${base}); put the file there first.`);
    }
  }
  return real;
}

/** read_file and list_directory, confined to `root`. Errors become tool errors the model sees. */
export function sandboxToolkit(root: string): Toolkit {
  const readFileTool = defineTool({
    name: 'read_file',
    description: 'Read a text file in the sandbox folder (path relative to the sandbox, at most 1 MiB).',
    parameters: z.object({ path: z.string().min(1).describe('e.g. "notes.md" or "logs/server.log"') }),
    async execute({ path: relative }) {
      const file = await resolveInSandbox(root, relative);
      const info = await stat(file);
      if (!info.isFile()) throw new Error(`"${relative}" is not a file.`);
      if (info.size > MAX_READ_BYTES)
        throw new Error(`"${relative}" is ${info.size} bytes; the limit is 1 MiB.`);
      return readFile(file, 'utf8');
    },
  });
  const listDirectory = defineTool({
    name: 'list_directory',
    description: 'List a folder in the sandbox: sub-folders end with "/", files show their size.',
    parameters: z.object({ path: z.string().default('.').describe('Folder relative to the sandbox.') }),
    async execute({ path: relative }) {
      const dir = await resolveInSandbox(root, relative);
      const entries = await readdir(dir, { withFileTypes: true });
      const lines = await Promise.all(
        entries
          .sort((a, b) => a.name.localeCompare(b.name))
          .map(async (e) =>
            e.isDirectory() ? `${e.name}/` : `${e.name} (${(await stat(path.join(dir, e.name))).size} bytes)`,
          ),
      );
      return lines.length > 0 ? lines.join('\n') : '(empty)';
    },
  });
  return { name: 'sandbox', tools: [readFileTool, listDirectory] };
}

/**
 * A sandbox with a README, a server log big enough to be offloaded (about 7 000 tokens) and a team
 * handbook to /learn (a few chunks, so indexed knowledge has something to choose from).
 */
export async function seedSandbox(root: string): Promise<void> {
  await mkdir(root, { recursive: true });
  const seeds: Record<string, () => string> = {
    'README.md': () =>
      '# Sandbox\n\nThe demo agent can read and list files in this folder, nothing outside it. ' +
      'Teach it a document with `/learn handbook.md`.\n',
    'server.log': serverLog,
    'handbook.md': () => HANDBOOK,
  };
  for (const [name, content] of Object.entries(seeds)) {
    const file = path.join(root, name);
    if (!(await exists(file))) await writeFile(file, content());
  }
}

// One paragraph per section (heading line included), so each section is a chunk of its own.
const HANDBOOK = `# Team handbook

## Releases
Production deploys happen from Monday to Thursday, between 10:00 and 16:00 Berlin time, through the
release pipeline only; nobody deploys from a laptop. A deploy on a Friday needs a written approval from
the head of platform, Ingrid Svensson, recorded in the release ticket before the pipeline starts. Every
release carries a changelog entry and a rollback plan of at most three steps. Database migrations ship
one release before the code that needs them, so a rollback never meets a schema it does not know.
Feature flags guard every change that users can see, and a flag is removed within two sprints of being
switched on everywhere. The release manager of the week announces each release in #releases, watches
the error dashboards for an hour afterwards, and rolls back without asking anyone when the error rate
doubles. Hotfixes follow the same pipeline; the only shortcut is a smaller review, never a skipped one.

## On-call
The on-call rotation changes every Wednesday at 09:00. The person on call answers a page within 15
minutes, day or night, and hands over open incidents in the #ops-handover channel at the end of the
shift. On-call time is paid at 25% of the hourly rate, and a night with a page is followed by a late
start the next morning. Swapping shifts is fine: update the rotation calendar and tell the team lead.
Nobody is on call for more than one week in four, and new joiners shadow two rotations first. The
runbooks live in the ops wiki, one page per alert, and whoever is paged by an alert without a runbook
writes one before the end of the shift. Pages that needed no action are reviewed every Monday and the
noisiest alert of the week is tuned or deleted.

## Incidents
An incident is anything that breaks a customer-facing feature or loses data. Open an incident channel,
name one incident lead, post updates every 30 minutes, and write the customer status page in plain
language. Within five working days the incident lead writes a blameless report: timeline, impact,
root cause, what went well, and at most five follow-up actions, each with an owner and a date. Reports
are read aloud at the monthly reliability review, where follow-ups older than a quarter are escalated.
Severity is set by impact, not by effort: one customer unable to pay is a severity 1, a broken internal
report is a severity 3. Only the incident lead talks to customers; everyone else keeps the channel for
facts, not guesses, and moves side discussions into threads.

## Expenses
Travel is booked through the company portal; trains are preferred for trips under six hours. Meals on
a trip are covered up to 60 euros a day. Hardware under 500 euros is bought directly; above that, the
budget owner signs the order. Receipts are uploaded within 30 days, or the expense is not refunded.
Conference tickets come from the team's learning budget of 1 500 euros per person and year, and a
short write-up of what was learnt is shared in #learning afterwards. Taxis are fine after 22:00 or
with luggage for a fair, and the hotel limit is 150 euros a night outside capitals, 220 in capitals.
Gifts from suppliers worth more than 50 euros are declined politely and mentioned to the team lead.

## Security
Laptops use full-disk encryption and lock after five minutes. Passwords live in the team vault, never
in chat or in code; secrets in code are rotated the same day they are found. Access to customer data
is requested per ticket and expires after seven days. Phishing attempts are forwarded to
security@example.com, and a lost device is reported within one hour, even outside office hours.
Two-factor authentication is required for every company account, with a hardware key for the cloud
console. Third-party libraries are added only with a pinned version and a licence check, and the
dependency scanner's critical findings are fixed within two working days.

## Code review
Every change is reviewed by one colleague, two for anything touching payments or authentication.
Reviews are answered within one working day; a pull request stays under 400 changed lines, or it is
split. The author merges once it is approved and green, and deletes the branch. Style is settled by the
formatter and the linter, never in review comments; review time goes to naming, tests and behaviour.
Draft pull requests are welcome for early feedback and are not counted as waiting for review.
`;

export function serverLog(): string {
  const lines: string[] = [];
  for (let i = 0; i < 240; i++) {
    const time = new Date(Date.UTC(2026, 0, 5, 9, 0, i * 7)).toISOString();
    const level = i % 40 === 17 ? 'ERROR' : i % 9 === 4 ? 'WARN' : 'INFO';
    const text =
      level === 'ERROR'
        ? `payment gateway timeout after 30000 ms (order ${1000 + i})`
        : level === 'WARN'
          ? `slow query on orders table: ${200 + i} ms`
          : `GET /api/orders/${1000 + i} 200 ${12 + (i % 30)} ms`;
    lines.push(`${time} ${level} ${text}`);
  }
  return `${lines.join('\n')}\n`;
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}
