// The recorded embeddings answers (test/fixtures/README.md, "Embeddings"), parsed.

import { readFileSync } from 'node:fs';
import { fixturePath } from '../fixtures/index.js';

export const readFixtureJson = (rel: string): any => JSON.parse(readFileSync(fixturePath(rel), 'utf8'));
