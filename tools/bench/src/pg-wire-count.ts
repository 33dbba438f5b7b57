/**
 * A TCP proxy in front of PostgreSQL that counts what clients send, whatever their driver (postgres.js,
 * node-postgres): `statements` — Execute messages of the extended protocol and simple Query messages;
 * `syncs` — Sync and simple Query messages, each answered by one ReadyForQuery (a round trip unless the
 * driver pipelines several: postgres.js may send a batch's statements before reading any answer);
 * `roundTrips` — times the client waited for the server: a Sync or Query sent while every earlier one, on
 * any of the client's connections through this proxy, was answered (ReadyForQuery) starts one; so does a
 * Flush after a Describe (a driver that learns a statement's parameter types before it binds them —
 * postgres.js does for an unnamed statement with untyped parameters — waits for that answer); what is
 * sent before those answers come (pipelined, or on another connection at once) rides on it. Bytes are
 * forwarded untouched; the server never sees the proxy. Without SSL only (both drivers' default on
 * 127.0.0.1).
 */
import net from 'node:net';

export interface WireCounts {
  statements: number;
  syncs: number;
  roundTrips: number;
}

/**
 * Waits not yet answered: on every connection of one proxy (`all.waits`), and one connection's in the order
 * sent (`mine`): a Sync or Query (answered by ReadyForQuery) or a Flush after a Describe (answered by the
 * statement's RowDescription or NoData).
 */
interface Outstanding {
  all: { waits: number };
  mine: Array<'sync' | 'flush'>;
}

export interface WireCounter {
  /** The proxy's port on 127.0.0.1: swap it into the connection URL. */
  port: number;
  counts: WireCounts;
  /** The counts since the last `take()` (and zero them). */
  take(): WireCounts;
  /** `url` with the proxy's host and port. */
  url(url: string): string;
  close(): Promise<void>;
}

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;

/** Counts the frontend messages of one connection's byte stream. */
function frontendParser(counts: WireCounts, outstanding: Outstanding, onSslRequest: () => void) {
  let buffered: Buffer = Buffer.alloc(0);
  let started = false;
  // A statement Describe sent since the last Sync or Flush.
  let describing = false;
  return (chunk: Buffer) => {
    buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
    for (;;) {
      if (!started) {
        // Untyped startup packets: SSL/GSS requests (answered with one byte), then the StartupMessage.
        if (buffered.length < 8) return;
        const length = buffered.readInt32BE(0);
        if (buffered.length < length) return;
        const code = buffered.readInt32BE(4);
        if (code === SSL_REQUEST || code === GSSENC_REQUEST) onSslRequest();
        else started = true;
        buffered = buffered.subarray(length);
        continue;
      }
      if (buffered.length < 5) return;
      const length = buffered.readInt32BE(1) + 1;
      if (buffered.length < length) return;
      const type = String.fromCharCode(buffered[0]!);
      if (type === 'E' || type === 'Q') counts.statements++;
      // A Describe of a statement ('S'), answered at the next Flush or Sync.
      if (type === 'D' && buffered[5] === 0x53) describing = true;
      const wait = type === 'S' || type === 'Q' ? 'sync' : type === 'H' && describing ? 'flush' : undefined;
      if (wait) {
        if (wait === 'sync') counts.syncs++;
        if (outstanding.all.waits === 0) counts.roundTrips++;
        outstanding.all.waits++;
        outstanding.mine.push(wait);
        describing = false;
      }
      buffered = buffered.subarray(length);
    }
  };
}

/** Counts the ReadyForQuery messages of one connection's backend stream (each answers one sync). */
function backendParser(outstanding: Outstanding) {
  let buffered: Buffer = Buffer.alloc(0);
  let singleBytes = 0;
  return {
    /** The client asked for SSL or GSS encryption: the server answers with one untyped byte. */
    expectSingleByte: () => {
      singleBytes++;
    },
    parse(chunk: Buffer) {
      buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
      for (;;) {
        if (singleBytes > 0 && buffered.length > 0) {
          singleBytes--;
          buffered = buffered.subarray(1);
          continue;
        }
        if (buffered.length < 5) return;
        const length = buffered.readInt32BE(1) + 1;
        if (buffered.length < length) return;
        const type = buffered[0];
        if (type === 0x5a) {
          // ReadyForQuery answers the first sync waiting and every flush before it (the startup's
          // answers none).
          const at = outstanding.mine.indexOf('sync');
          const answered = outstanding.mine.splice(0, at + 1).length;
          outstanding.all.waits -= answered;
        } else if ((type === 0x54 || type === 0x6e) && outstanding.mine[0] === 'flush') {
          // RowDescription or NoData: a flushed Describe's answer is complete.
          outstanding.mine.shift();
          outstanding.all.waits--;
        }
        buffered = buffered.subarray(length);
      }
    },
  };
}

/** Starts the proxy to PostgreSQL at `target` (host and port of a URL). */
export async function startWireCounter(target: string): Promise<WireCounter> {
  const { hostname, port } = new URL(target);
  const counts: WireCounts = { statements: 0, syncs: 0, roundTrips: 0 };
  const all = { waits: 0 };
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(port || 5432), hostname);
    sockets.add(client).add(upstream);
    const outstanding: Outstanding = { all, mine: [] };
    const backend = backendParser(outstanding);
    const count = frontendParser(counts, outstanding, backend.expectSingleByte);
    client.on('data', (chunk: Buffer) => {
      count(chunk);
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      backend.parse(chunk);
      client.write(chunk);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const proxyPort = (server.address() as net.AddressInfo).port;
  return {
    port: proxyPort,
    counts,
    take() {
      const taken = { ...counts };
      counts.statements = 0;
      counts.syncs = 0;
      counts.roundTrips = 0;
      return taken;
    },
    url(url: string) {
      const u = new URL(url);
      u.hostname = '127.0.0.1';
      u.port = String(proxyPort);
      return u.toString();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
