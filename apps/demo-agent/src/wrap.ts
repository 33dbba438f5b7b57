/**
 * `text` with every line longer than `width` broken at spaces (never inside a word), each continuation
 * indented like the line it continues. A word longer than the width stays whole on its own line.
 */
export function wrapToWidth(text: string, width: number): string {
  return text
    .split('\n')
    .map((line) => {
      if (line.length <= width) return line;
      const indent = /^\s*/.exec(line)![0];
      const words = line.slice(indent.length).split(' ');
      const out: string[] = [];
      let current = indent;
      for (const word of words) {
        const candidate = current.trim() === '' ? `${indent}${word}` : `${current} ${word}`;
        if (candidate.length > width && current.trim() !== '') {
          out.push(current);
          current = `${indent}${word}`;
        } else current = candidate;
      }
      out.push(current);
      return out.join('\n');
    })
    .join('\n');
}
