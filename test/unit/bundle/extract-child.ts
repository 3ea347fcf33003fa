// Extracts an archive file in a separate process, so a test can run it under a small heap cap.
import { createReadStream } from 'node:fs';
import { extractTarGz } from '../../../src/bundle/extract.ts';

const [archive, dest] = process.argv.slice(2) as [string, string];
const result = await extractTarGz(createReadStream(archive), dest);
process.stdout.write(JSON.stringify({ files: result.files }));
