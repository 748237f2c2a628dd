#!/usr/bin/env node
// The `airouter` command. TypeScript runs through tsx's loader, so a checkout needs no build step.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('./cli/main.ts');
await main(process.argv.slice(2));
