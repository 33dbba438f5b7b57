/*
 * One redaction for every URL Kioku prints (CLI output, Studio's header, MCP messages, logs): a password
 * in the user-info part (`redis://:secret@host`, `postgres://user:secret@host`) and the value of a query
 * parameter that names a secret (`?password=`, `?token=`, `?api_key=`, …) become `***`. Works on any
 * text: every `scheme://…` in it is redacted, the rest is left as it is.
 */

/** Query parameters whose value is a secret (case-insensitive, `-` and `_` alike). */
const SECRET_PARAMETERS = new Set([
  'password',
  'passwd',
  'pass',
  'pwd',
  'secret',
  'clientsecret',
  'token',
  'accesstoken',
  'authtoken',
  'auth',
  'authorization',
  'apikey',
  'key',
  'sslpassword',
  'sslkey',
  'signature',
  'sig',
]);

/** A URL in text; a closing bracket or full stop right after it is the sentence's, not the URL's. */
const URL_IN_TEXT = /[a-z][a-z0-9+.-]*:\/\/(?:[^\s"'<>`]*[^\s"'<>`).,;:])?/gi;
/** `//` then a user name and `:` then everything up to the last `@` before the path: the password. */
const USER_INFO_PASSWORD = /^([a-z][a-z0-9+.-]*:\/\/[^/?#@:\s]*:)[^/?#\s]*@/i;
const QUERY_PARAMETER = /([?&;])([^=&#;\s]+)=([^&#;\s]*)/g;

function isSecretParameter(name: string): boolean {
  let decoded = name;
  try {
    decoded = decodeURIComponent(name);
  } catch {
    // A malformed escape: judge the name as written.
  }
  return SECRET_PARAMETERS.has(decoded.toLowerCase().replace(/[-_]/g, ''));
}

function redactOne(url: string): string {
  return url
    .replace(USER_INFO_PASSWORD, (_, head: string) => `${head}***@`)
    .replace(QUERY_PARAMETER, (whole, sep: string, name: string, value: string) =>
      value !== '' && isSecretParameter(name) ? `${sep}${name}=***` : whole,
    );
}

/**
 * `text` with the secrets of every URL in it replaced by `***`: the password of `user:password@` (also
 * with an empty user, `redis://:password@`) and secret query parameters (`?password=`, `&token=`, …).
 * Safe on text without URLs (returned unchanged).
 */
export function redactUrl(text: string): string {
  return text.replace(URL_IN_TEXT, redactOne);
}
