// The Git server a tools test file shares, as one call at its top: started before its tests and
// stopped after: smart HTTP with basic auth, or SSH letting in the deploy keys the file authorizes.
import { afterAll, beforeAll } from 'vitest';
import { tempDir } from '../temp.ts';
import { GitServer, type GitServerOptions } from './git-server.ts';
import { SshGitServer } from './ssh-git-server.ts';

/** A smart-HTTP Git server (git http-backend) for this file, its repositories under `prefix…`. */
export function gitServerSuite(prefix: string, options: GitServerOptions): GitServer {
  const server = new GitServer(tempDir(prefix), options);
  beforeAll(() => server.start());
  afterAll(() => server.stop());
  return server;
}

/** An sshd serving git-shell for this file: keys authorized before its tests run are let in. */
export function sshGitServerSuite(): SshGitServer {
  const server = new SshGitServer();
  beforeAll(() => server.start());
  afterAll(() => server.stop());
  return server;
}
