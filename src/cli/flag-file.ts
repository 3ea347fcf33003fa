import { readFile } from 'node:fs/promises';
import { usageError } from './exit-codes.ts';

/** The contents of the file a flag names; one that cannot be read is a usage error naming the flag, the file and why. */
export async function readFlagFile(flag: string, path: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (error) {
    throw usageError(`${flag} ${path} cannot be read: ${(error as NodeJS.ErrnoException).code ?? error}.`);
  }
}
