import type { RunningStudio } from '../src/index.js';

/** Open Studio's printed address as a browser would: the session cookie (`name=value`) it sets. */
export async function sessionCookie(studio: RunningStudio): Promise<string> {
  const opened = await fetch(studio.url, { redirect: 'manual' });
  const cookie = opened.headers.get('set-cookie')?.split(';')[0];
  if (opened.status !== 303 || !cookie)
    throw new Error(`Opening ${studio.url} gave ${opened.status}, no cookie`);
  return cookie;
}
