/**
 * Extraction grounding (issue 24): every case of `data/grounding.json` is an extraction candidate with the
 * exchange it came from, labelled by whether the user said it. Core's `groundedInUser` (the check
 * extraction applies before storing) decides; the table gives, for the "not said" decisions that drop a
 * candidate, precision (dropped candidates the user indeed never said) and recall (candidates the user
 * never said that were dropped), and the cases it got wrong.
 *
 *   pnpm bench:grounding [--json]
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { groundedInUser } from '@kioku/core/passes';
import { cliArgs, round, table } from './util.js';

interface GroundingCase {
  id: string;
  user: string;
  answer: string;
  candidate: string;
  said: boolean;
}

const here = path.dirname(fileURLToPath(import.meta.url));
const file = path.join(here, '..', 'data', 'grounding.json');
const cases = (JSON.parse(readFileSync(file, 'utf8')) as { cases: GroundingCase[] }).cases;

const results = cases.map((c) => {
  const g = groundedInUser(c.candidate, { user: c.user, answer: c.answer });
  return { ...c, dropped: !g.grounded, reason: g.reason ?? '', userShare: g.userShare };
});
const notSaid = results.filter((r) => !r.said);
const dropped = results.filter((r) => r.dropped);
const truePositives = dropped.filter((r) => !r.said).length;
const precision = dropped.length === 0 ? 1 : truePositives / dropped.length;
const recall = notSaid.length === 0 ? 1 : truePositives / notSaid.length;
const keptSaid = results.filter((r) => r.said && !r.dropped).length;
const said = results.filter((r) => r.said).length;
const wrong = results.filter((r) => r.dropped === r.said);

const summary = {
  cases: results.length,
  notSaid: notSaid.length,
  said,
  dropPrecision: round(precision * 100),
  dropRecall: round(recall * 100),
  saidKept: round((keptSaid / said) * 100),
  wrong: wrong.map((r) => ({ id: r.id, said: r.said, dropped: r.dropped, reason: r.reason })),
};

console.log(
  `Extraction grounding on ${results.length} labelled candidates (${notSaid.length} not said by the user, ${said} said)\n`,
);
console.log(
  table(
    ['measure', 'value'],
    [
      ['drop precision (dropped and not said / dropped)', `${summary.dropPrecision} %`],
      ['drop recall (dropped and not said / not said)', `${summary.dropRecall} %`],
      ['said by the user and kept', `${summary.saidKept} %`],
    ],
  ),
);
if (wrong.length > 0) {
  console.log('\nWrong decisions:');
  console.log(
    table(
      ['case', 'said', 'dropped', 'why'],
      wrong.map((r) => [
        r.id,
        String(r.said),
        String(r.dropped),
        r.reason || `user share ${round(r.userShare * 100)} %`,
      ]),
    ),
  );
}
if (cliArgs().includes('--json')) console.log(JSON.stringify(summary));
