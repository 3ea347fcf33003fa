// Forwards TCP from the real node's address to the API server on loopback, so pods reach it through
// the `kubernetes` Service while nothing off the machine can (the API server listens on loopback).
// Usage: node forward.ts LISTEN_HOST:PORT TARGET_HOST:PORT
import { connect, createServer } from 'node:net';

const address = (arg = '') => ({
  host: arg.slice(0, arg.lastIndexOf(':')),
  port: Number(arg.split(':').at(-1)),
});
const [listen, target] = process.argv.slice(2).map(address);
if (!listen || !target) throw new Error('usage: node forward.ts LISTEN_HOST:PORT TARGET_HOST:PORT');

createServer((client) => {
  const upstream = connect(target.port, target.host);
  const end = () => {
    client.destroy();
    upstream.destroy();
  };
  for (const socket of [client, upstream]) socket.on('error', end).on('close', end);
  client.pipe(upstream).pipe(client);
}).listen(listen.port, listen.host);
