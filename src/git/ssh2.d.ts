// The part of ssh2 (mscdex/ssh2 1.x, which ships no types) that the SSH transport uses.
declare module 'ssh2' {
  import type { EventEmitter } from 'node:events';
  import type { Duplex, Readable } from 'node:stream';

  export interface ConnectConfig {
    host: string;
    port: number;
    username: string;
    privateKey: string | Buffer;
    passphrase?: string;
    /** Called with the raw host key blob (no hostHash); false refuses before authentication. */
    hostVerifier: (key: Buffer) => boolean;
    algorithms?: { serverHostKey?: string[]; cipher?: string[] };
    readyTimeout?: number;
    keepaliveInterval?: number;
    /** Only the methods listed; no agent, no keyboard-interactive. */
    authHandler?: string[];
    debug?: (message: string) => void;
  }

  export interface ClientChannel extends Duplex {
    stderr: Readable;
    on(event: 'exit', listener: (code: number | null, signal?: string) => void): this;
    on(event: string, listener: (...args: unknown[]) => void): this;
  }

  export class Client extends EventEmitter {
    connect(config: ConnectConfig): this;
    exec(command: string, callback: (err: Error | undefined, channel: ClientChannel) => void): boolean;
    end(): this;
    destroy(): this;
  }

  export const utils: {
    parseKey(data: string | Buffer, passphrase?: string): unknown;
  };
}
