// The single executable's entry point: the CLI's main, which main.ts runs only as the process's entry module.
import { main } from '../../src/cli/main.ts';

void main();
