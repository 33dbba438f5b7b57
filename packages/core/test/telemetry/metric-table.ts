/** The metric table's rows as docs/TELEMETRY.md prints them, from the instrument list. */
export function metricTableRows(
  metrics: Readonly<
    Record<
      string,
      { name: string; type: string; unit: string; description: string; attributes: readonly string[] }
    >
  >,
): string[] {
  return Object.values(metrics).map(
    (m) =>
      `| \`${m.name}\` | ${m.type} | \`${m.unit}\` | ${m.description} | ${
        m.attributes.length ? m.attributes.map((a) => `\`${a}\``).join(', ') : '—'
      } |`,
  );
}
