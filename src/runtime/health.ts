// /metrics, /healthz (the process answers) and /readyz (caller-defined: informers synced and
// leading or standing by healthily) on one small HTTP server.
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

// Not an `import` statement: node:http's ES module wrapper loads undici (see http.ts).
const { createServer } = process.getBuiltinModule('node:http');

interface HealthServerOptions {
  host?: string;
  /** 0 picks a free port. */
  port: number;
  registry: Registry;
  ready: () => boolean;
}

export interface HealthServer {
  port: number;
  close(): Promise<void>;
}

export async function startHealthServer(options: HealthServerOptions): Promise<HealthServer> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const text = (status: number, body: string, type = 'text/plain; charset=utf-8') => {
      res.writeHead(status, { 'content-type': type });
      res.end(body);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return text(405, 'method not allowed\n');
    switch (path) {
      case '/healthz':
      case '/livez':
        return text(200, 'ok\n');
      case '/readyz': {
        let ready = false;
        try {
          ready = options.ready();
        } catch {
          ready = false;
        }
        return ready ? text(200, 'ok\n') : text(503, 'not ready\n');
      }
      case '/metrics':
        options.registry.metrics().then(
          (body) => text(200, body, options.registry.contentType),
          (err: unknown) => text(500, `metrics failed: ${String(err)}\n`),
        );
        return;
      default:
        return text(404, 'not found\n');
    }
  });
  // Scrapes and probes are short; do not let a slow client hold the process at shutdown.
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '0.0.0.0', () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
